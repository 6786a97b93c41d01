import Foundation
import XCTest

@testable import Cloudy

/// Air quality in the store and on the page: kept apart from the weather, so a failing
/// air-quality API changes `weather_air_quality_up` and nothing the weather shows.
final class AirQualityStoreTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    func store(airQuality: AirQualitySettings?) -> WeatherStore {
        var config = Config(places: [berlin])
        config.airQuality = airQuality
        return WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics", now: 0,
            processMetrics: { MetricFamilies() })
    }

    func weather() throws -> WeatherSnapshot {
        try OpenMeteoProvider.decode(
            TestPaths.fixtureBytes("open-meteo-forecast.json"), places: [berlin], forecast: ForecastSettings()
        )[0].get()
    }

    func air() throws -> AirQualityReport {
        try OpenMeteoAirQuality.decode(
            TestPaths.fixtureBytes("open-meteo-air-quality.json"), places: [berlin], forecast: ForecastSettings()
        )[0].get()
    }

    func testAFailingAirQualityAskLeavesTheWeatherAsItWas() throws {
        let store = store(airQuality: AirQualitySettings())
        store.record([(place: berlin, location: nil, outcome: .success(try weather()))], at: 100)
        store.recordAirQuality([(place: berlin, location: nil, outcome: .success(try air()))], at: 100)
        store.render(now: 100)
        let before = store.renderedSamples
        XCTAssertEqual(before[#"weather_air_quality_up{location="Berlin"}"#], 1)
        XCTAssertEqual(
            before[#"weather_air_ozone_grams_per_cubic_meter{location="Berlin"}"#] ?? .nan, 118e-6, accuracy: 1e-15)
        XCTAssertEqual(before[#"weather_pollen_grains_per_cubic_meter{location="Berlin",plant="grass"}"#], 35.2)

        store.recordAirQuality(
            [(place: berlin, location: nil, outcome: .failure(WeatherFetchError("open-meteo-air-quality: HTTP 503")))],
            at: 700)
        store.render(now: 700)
        let after = store.renderedSamples
        XCTAssertEqual(after[#"weather_air_quality_up{location="Berlin"}"#], 0)
        let weatherSeries = before.filter { $0.key.hasPrefix("weather_") && !Self.isAirQuality($0.key) }
        XCTAssertFalse(weatherSeries.isEmpty)
        for (series, value) in weatherSeries { XCTAssertEqual(after[series], value, series) }
        XCTAssertEqual(
            after[#"weather_air_quality_european_index{location="Berlin"}"#], 58,
            "the last good report stays until stale_after")
        XCTAssertFalse(store.rendered.readiness.answer.contains("air-quality"), "readiness is the weather's")
    }

    /// A reload that turns pollen off, or moves to OpenWeatherMap's source (no index, no
    /// pollen), while the air-quality API fails: what the new settings do not give leaves at
    /// once; the concentrations both sources give stay until stale_after.
    func testAReloadKeepsOnlyWhatTheNewSettingsGive() throws {
        let store = store(airQuality: AirQualitySettings())
        store.recordAirQuality([(place: berlin, location: nil, outcome: .success(try air()))], at: 100)
        let failed = WeatherFetchError("open-meteo-air-quality: HTTP 503")
        store.recordAirQuality([(place: berlin, location: nil, outcome: .failure(failed))], at: 200)
        let grass = #"weather_pollen_grains_per_cubic_meter{location="Berlin",plant="grass"}"#
        let grassMax =
            #"weather_forecast_daily_pollen_grains_per_cubic_meter_max{location="Berlin",day="0",plant="grass"}"#
        let index = #"weather_air_quality_european_index{location="Berlin"}"#
        let indexMax = #"weather_forecast_daily_air_quality_european_index_max{location="Berlin",day="0"}"#
        let ozone = #"weather_air_ozone_grams_per_cubic_meter{location="Berlin"}"#
        store.render(now: 200)
        XCTAssertNotNil(store.renderedSamples[grassMax])

        var config = Config(places: [berlin])
        config.airQuality = AirQualitySettings(pollen: false)
        store.replaceConfig(config)
        store.render(now: 200)
        XCTAssertNil(store.renderedSamples[grass])
        XCTAssertNil(store.renderedSamples[grassMax])
        XCTAssertEqual(store.renderedSamples[index], 58, "pollen off: the indices stay")

        config.airQuality = AirQualitySettings(source: .openWeatherMap)
        store.replaceConfig(config)
        store.render(now: 200)
        XCTAssertNil(store.renderedSamples[index])
        XCTAssertNil(store.renderedSamples[indexMax])
        XCTAssertEqual(store.renderedSamples[ozone] ?? .nan, 118e-6, accuracy: 1e-15, "both sources give it")
    }

    func testWithoutTheBlockNoAirQualityFamilyIsOnThePage() throws {
        let store = store(airQuality: nil)
        store.record([(place: berlin, location: nil, outcome: .success(try weather()))], at: 100)
        store.recordAirQuality([(place: berlin, location: nil, outcome: .success(try air()))], at: 100)
        store.render(now: 100)
        XCTAssertFalse(store.renderedSamples.keys.contains(where: Self.isAirQuality))
    }

    func testANeverAskedPlaceIsDownAndAStaleReportLeavesThePage() throws {
        let store = store(airQuality: AirQualitySettings())
        store.render(now: 0)
        XCTAssertEqual(store.renderedSamples[#"weather_air_quality_up{location="Berlin"}"#], 0)
        store.recordAirQuality([(place: berlin, location: nil, outcome: .success(try air()))], at: 100)
        store.render(now: 100 + 1800)
        XCTAssertEqual(store.renderedSamples[#"weather_air_quality_european_index{location="Berlin"}"#], 58)
        store.render(now: 100 + 1801)
        XCTAssertNil(store.renderedSamples[#"weather_air_quality_european_index{location="Berlin"}"#])
        XCTAssertEqual(store.renderedSamples[#"weather_air_quality_up{location="Berlin"}"#], 1)
    }

    static func isAirQuality(_ series: String) -> Bool {
        [
            "weather_air_", "weather_pollen_", "weather_forecast_hourly_air_", "weather_forecast_daily_air_",
            "weather_forecast_daily_pollen_",
        ].contains { series.hasPrefix($0) }
    }
}
