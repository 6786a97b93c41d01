import Foundation
import NIOCore
import XCTest

@testable import Cloudy

/// An answer that repeats a day or an hour still gives one sample per series: the first.
final class OneStepPerLabelTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    func lines(_ store: WeatherStore, _ series: String) -> [Substring] {
        String(buffer: store.rendered.metrics.prometheus).split(separator: "\n").filter { $0.hasPrefix(series + " ") }
    }

    func testARepeatedDayOrHourIsOneSeriesWithTheFirstValue() {
        var config = Config(places: [berlin])
        config.airQuality = AirQualitySettings()
        let store = WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics", now: 0,
            processMetrics: { MetricFamilies() })
        let snapshot = WeatherSnapshot(
            current: CurrentConditions(observedAt: 100, temperatureCelsius: 20),
            daily: [
                DailyForecast(daysAhead: 0, date: 0, temperatureMaxCelsius: 20),
                DailyForecast(daysAhead: 1, date: 86_400, temperatureMaxCelsius: 11),
                DailyForecast(daysAhead: 1, date: 169_200, temperatureMaxCelsius: 12),
                DailyForecast(daysAhead: 2, date: 255_600, temperatureMaxCelsius: 13),
            ],
            hourly: [
                HourlyForecast(hoursAhead: 1, time: 3_600, temperatureCelsius: 5),
                HourlyForecast(hoursAhead: 1, time: 3_600, temperatureCelsius: 6),
            ])
        store.record([(place: berlin, location: nil, outcome: .success(snapshot))], at: 100)
        let report = AirQualityReport(
            observedAt: 100, indices: AirQualityIndices(european: 30),
            hourly: [
                HourlyAirQuality(hoursAhead: 1, time: 3_600, indices: AirQualityIndices(european: 40)),
                HourlyAirQuality(hoursAhead: 1, time: 3_600, indices: AirQualityIndices(european: 50)),
            ],
            daily: [DailyAirQuality(daysAhead: 0), DailyAirQuality(daysAhead: 0)])
        store.recordAirQuality([(place: berlin, location: nil, outcome: .success(report))], at: 100)
        store.render(now: 100)
        XCTAssertEqual(
            lines(store, #"weather_forecast_daily_temperature_max_celsius{location="Berlin",day="1"}"#),
            [#"weather_forecast_daily_temperature_max_celsius{location="Berlin",day="1"} 11"#])
        XCTAssertEqual(
            lines(store, #"weather_forecast_daily_temperature_max_celsius{location="Berlin",day="2"}"#).count, 1)
        XCTAssertEqual(
            lines(store, #"weather_forecast_hourly_temperature_celsius{location="Berlin",hour="1"}"#),
            [#"weather_forecast_hourly_temperature_celsius{location="Berlin",hour="1"} 5"#])
        XCTAssertEqual(
            lines(store, #"weather_forecast_hourly_air_quality_european_index{location="Berlin",hour="1"}"#),
            [#"weather_forecast_hourly_air_quality_european_index{location="Berlin",hour="1"} 40"#])
        XCTAssertEqual(store.statuses[0].airQuality?.report?.daily.count, 1)
    }

    /// Open-Meteo stamps each day at its local midnight; across a daylight-saving change those
    /// are not 24 hours apart at the answer's one offset, and each is still its own day.
    func testOpenMeteoDaysStampedAtTrueLocalMidnightsAcrossASwitchAreEachTheirOwnDay() throws {
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast.json")) as? [String: Any])
        json["utc_offset_seconds"] = 3_600
        var current = try XCTUnwrap(json["current"] as? [String: Any])
        current["time"] = 1_774_692_000  // 2026-03-28 10:00Z, Saturday before the switch
        json["current"] = current
        var daily = try XCTUnwrap(json["daily"] as? [String: Any])
        // Midnight in Berlin: 23:00Z on 27 and 28 March, 22:00Z from 29 March on (CEST).
        daily["time"] = [1_774_652_400, 1_774_738_800] + (0..<5).map { 1_774_821_600 + 86_400 * $0 }
        json["daily"] = daily
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        let snapshot = try OpenMeteoProvider.decode(
            body, places: [berlin], forecast: ForecastSettings(days: 7, hours: 24))[0].get()
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), Array(0..<7))
    }
}
