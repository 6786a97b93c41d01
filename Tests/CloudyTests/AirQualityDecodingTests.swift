import Foundation
import XCTest

@testable import Cloudy

/// The air-quality sources' answers decoded into base units: the recorded fixtures, nulls as no
/// sample, the forecast's hours and local days, error entries, and what a place costs.
final class AirQualityDecodingTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006)
    let forecast = ForecastSettings(days: 3, hours: 2)

    func report(_ fixture: String, places: [Place]) throws -> [Result<AirQualityReport, WeatherFetchError>] {
        OpenMeteoAirQuality.decode(try TestPaths.fixtureBytes(fixture), places: places, forecast: forecast)
    }

    func testConcentrationsAreGramsPerCubicMeterExactToANanogram() throws {
        let berlin = try report("open-meteo-air-quality.json", places: [berlin])[0].get()
        let expected: [Pollutant: Double] = [
            .pm25: 8.4e-6, .pm10: 14.2e-6, .ozone: 118e-6, .nitrogenDioxide: 12.3e-6, .sulphurDioxide: 1.2e-6,
            .carbonMonoxide: 183e-6,
        ]
        XCTAssertEqual(Set(berlin.concentrations.keys), Set(Pollutant.allCases))
        for (pollutant, grams) in expected {
            XCTAssertEqual(berlin.concentrations[pollutant] ?? .nan, grams, accuracy: 1e-9 * 1e-6, "\(pollutant)")
        }
        XCTAssertEqual(berlin.concentrations[.pm25], 8.4e-6, "the decimal the API wrote, moved six places")
        XCTAssertEqual(Pollutant.gramsPerCubicMeter(micrograms: 1e-7), 1e-13)
        XCTAssertEqual(Pollutant.gramsPerCubicMeter(micrograms: 0), 0)
        XCTAssertEqual(berlin.indices, AirQualityIndices(european: 58, epa: 63))
        XCTAssertEqual(berlin.observedAt, 1_781_524_800)
    }

    func testPollenIsPerPlantAtTheCurrentHourAndZeroStaysZero() throws {
        let berlin = try report("open-meteo-air-quality.json", places: [berlin])[0].get()
        XCTAssertEqual(berlin.pollen[.grass], 35.2)
        XCTAssertEqual(berlin.pollen[.birch], 0, "out of season is 0.0 in the answer, and a sample of 0")
        XCTAssertEqual(Set(berlin.pollen.keys), Set(Plant.allCases))
    }

    func testAPlaceOutsideEuropeHasNoPollenSampleAndKeepsItsIndices() throws {
        let outcomes = try report("open-meteo-air-quality-multi.json", places: [berlin, newYork])
        let newYork = try outcomes[1].get()
        XCTAssertEqual(newYork.pollen, [:], "null pollen is no sample, never 0")
        XCTAssertEqual(newYork.indices, AirQualityIndices(european: 29, epa: 52))
        XCTAssertEqual(newYork.concentrations[.pm25] ?? .nan, 9.6e-6, accuracy: 1e-15)
        XCTAssertNil(newYork.concentrations[.ozone], "a pollutant the answer lacks is no sample")
        XCTAssertEqual(try outcomes[0].get().pollen[.grass], 35.2)
    }

    func testHourOneIsTheNextWholeHour() throws {
        let berlin = try report("open-meteo-air-quality.json", places: [berlin])[0].get()
        XCTAssertEqual(berlin.hourly.map(\.hoursAhead), [1, 2])
        XCTAssertEqual(berlin.hourly.map(\.indices.european), [62, 64])
        XCTAssertEqual(berlin.hourly.map(\.indices.epa), [65, 66])
    }

    /// Hours across the place's local midnight: each local day's maximum from its own hours;
    /// a day whose values are all null has no sample.
    func testDailyMaximaArePerLocalDayInThePlacesZone() throws {
        // 2026-06-15 20:00 UTC is 22:00 in Berlin (UTC+2): two hours today, 24 tomorrow.
        let report = try twoDays(
            european: [30, 45, 20, 25] + Array(repeating: 10, count: 22),
            grass: [1.5, 2.5, 9.0, nil] + Array(repeating: 3.0, count: 22))
        XCTAssertEqual(report.daily.map(\.daysAhead), [0, 1])
        // 2026-06-15 is day 20,619 since 1970-01-01: the dates the pages match weather days by.
        XCTAssertEqual(report.daily.map(\.localDay), [20_619, 20_620])
        XCTAssertEqual(report.daily.map(\.indicesMax.european), [45, 25])
        XCTAssertEqual(report.daily.map(\.indicesMax.epa), [nil, nil], "a day of nulls is no sample")
        XCTAssertEqual(report.daily.map { $0.pollenMax[.grass] }, [2.5, 9.0])
        XCTAssertEqual(report.daily[0].pollenMax[.birch], nil, "a plant the answer lacks is no sample")
        XCTAssertEqual(report.pollen[.grass], 1.5)
    }

    /// A later day a series stops describing before its midnight (pollen past the model run's
    /// last day: its first hours, then null) gets no maximum for that series, as the weather
    /// leaves out such a day; today is what is left of it, and a series known all day keeps its.
    func testALaterDayASeriesEndsEarlyHasNoMaximumOfIt() throws {
        let report = try twoDays(
            european: [30, 45] + Array(repeating: 20, count: 24),
            grass: [1.5, 2.5, 2.0, 1.5, 1.0] + Array(repeating: nil, count: 21))
        XCTAssertEqual(report.daily.map(\.indicesMax.european), [45, 20])
        XCTAssertEqual(report.daily.map { $0.pollenMax[.grass] }, [2.5, nil], "three night hours are no day's maximum")
        let today = try twoDays(european: [30, 45] + Array(repeating: nil, count: 24), grass: [1.5, nil])
        XCTAssertEqual(today.daily.map(\.indicesMax.european), [45, nil], "today: the hours it has")
        XCTAssertEqual(today.daily.map { $0.pollenMax[.grass] }, [1.5, nil])
    }

    /// An answer for Berlin from 2026-06-15 22:00 local, one hour per value given.
    func twoDays(european: [Double?], grass: [Double?]) throws -> AirQualityReport {
        let now = 1_781_553_600.0
        let hours = max(european.count, grass.count)
        func list(_ values: [Double?]) -> String {
            "["
                + (0..<hours).map { $0 < values.count ? values[$0].map { "\($0)" } ?? "null" : "null" }
                .joined(separator: ",") + "]"
        }
        let body = """
            {"utc_offset_seconds":7200,"current":{"time":\(Int(now)),"european_aqi":30},
             "hourly":{"time":\((0..<hours).map { Int(now) + 3600 * $0 }),"european_aqi":\(list(european)),
                       "us_aqi":\(list([])),"grass_pollen":\(list(grass))}}
            """
        return try OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin], forecast: forecast)[0].get()
    }

    func testAnErrorEntryFailsItsPlaceAloneAndAWrongCountFailsTheBatch() throws {
        let body = """
            [{"error":true,"reason":"Cannot initialize CamsVariable"},
             {"current":{"time":1781524800,"european_aqi":12},"hourly":{"time":[1781524800],"european_aqi":[12]}}]
            """
        let outcomes = OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin, newYork], forecast: forecast)
        XCTAssertEqual(outcomes[0].failureMessage, "open-meteo-air-quality: Cannot initialize CamsVariable")
        XCTAssertEqual(try outcomes[1].get().indices.european, 12)
        let short = OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin, newYork, berlin], forecast: forecast)
        XCTAssertEqual(
            short.map(\.failureMessage),
            Array(repeating: "open-meteo-air-quality: answer has 2 entries for 3 places", count: 3))
    }

    /// Both sections are always asked for: an entry without one fails its place, rather than
    /// leaving it up without its pollen and forecast indices (or without any current value).
    func testAnEntryLackingASectionFailsItsPlace() throws {
        // A current section without its time places no hour or day either.
        let body = """
            [{"current":{"time":1781524800,"european_aqi":12}},
             {"hourly":{"time":[1781524800],"european_aqi":[12]}},
             {"current":{"time":null,"european_aqi":12},"hourly":{"time":[1781524800],"european_aqi":[12]}}]
            """
        let outcomes = OpenMeteoAirQuality.decode(
            Array(body.utf8), places: [berlin, newYork, berlin], forecast: forecast)
        XCTAssertEqual(
            outcomes.map(\.failureMessage),
            [
                "open-meteo-air-quality: answer lacks the hourly section",
                "open-meteo-air-quality: answer lacks the current section",
                "open-meteo-air-quality: answer's current section has no time",
            ])
    }

    func testASeriesThatDoesNotPairWithItsTimesFailsThePlace() throws {
        let body = """
            {"current":{"time":1781524800},"hourly":{"time":[1781524800],"european_aqi":[12,14]}}
            """
        XCTAssertEqual(
            OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin], forecast: forecast)[0].failureMessage,
            "open-meteo-air-quality: answer's hourly.european_aqi has 2 values where hourly.time has 1")
    }

    func testAnUnknownConcentrationUnitIsNoSample() throws {
        let body = """
            {"current_units":{"pm10":"ppm"},"current":{"time":1781524800,"pm10":14.2,"pm2_5":8.4},"hourly":{"time":[]}}
            """
        let report = try OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin], forecast: forecast)[0].get()
        XCTAssertNil(report.concentrations[.pm10])
        XCTAssertNotNil(report.concentrations[.pm25])
    }

    func testOpenWeatherMapGivesItsConcentrationsAndNoIndex() throws {
        let report = try OpenWeatherMapAirPollution.decode(
            try TestPaths.fixtureBytes("openweathermap-air-pollution.json")
        ).get()
        XCTAssertEqual(report.indices, AirQualityIndices(), "its 1–5 index is neither the European nor the EPA's")
        XCTAssertEqual(report.concentrations[.ozone] ?? .nan, 118.02e-6, accuracy: 1e-15)
        XCTAssertEqual(report.concentrations[.carbonMonoxide] ?? .nan, 183.58e-6, accuracy: 1e-15)
        XCTAssertEqual(report.concentrations.count, 6)
        XCTAssertEqual(report.observedAt, 1_781_525_911)
        XCTAssertEqual(report.pollen, [:])
        XCTAssertThrowsError(try OpenWeatherMapAirPollution.decode(Array(#"{"list":[]}"#.utf8)).get())
    }

    func testRequestAsksForEveryPlaceAtOnceAndCostsItsVariables() {
        let upstream = Upstream(
            baseURL: "http://127.0.0.1:1", timeout: 1, client: CurlHTTPClient(userAgent: "test"),
            recorder: ExporterTelemetry(startedAt: 0))
        let withPollen = OpenMeteoAirQuality(
            upstream, forecast: ForecastSettings(days: 7, hours: 24), pollen: true, callsCountedAs: nil)
        let url = withPollen.url(for: [berlin, newYork])
        XCTAssertTrue(
            url.hasPrefix("http://127.0.0.1:1/v1/air-quality?latitude=52.52,40.7143&longitude=13.41,-74.006&"), url)
        XCTAssertTrue(url.contains("&hourly=european_aqi,us_aqi,alder_pollen,birch_pollen,grass_pollen,"), url)
        XCTAssertTrue(url.contains("&forecast_days=7&"), "the API takes at most 7: \(url)")
        XCTAssertTrue(url.contains("&timezone=auto&"))
        // 8 current + 8 hourly variables over 7 days: 16 / 10 × max(1, 7 / 14).
        XCTAssertEqual(withPollen.callsPerPlace, 1.6, accuracy: 1e-12)
        let withoutPollen = OpenMeteoAirQuality(
            upstream, forecast: ForecastSettings(days: 7, hours: 24), pollen: false, callsCountedAs: nil)
        XCTAssertFalse(withoutPollen.url(for: [berlin]).contains("pollen"))
        XCTAssertEqual(withoutPollen.callsPerPlace, 1.0, "10 variables are one call")
        XCTAssertEqual(OpenWeatherMapAirPollution(upstream, key: Secret("k"), callsCountedAs: nil).callsPerPlace, 1)
        var config = Config(forecast: ForecastSettings(days: 7, hours: 24), places: [berlin])
        XCTAssertEqual(CallCost.airQualityPerPlace(config), 0, "off without air_quality:")
        config.airQuality = AirQualitySettings()
        XCTAssertEqual(CallCost.airQualityPerPlace(config), 1.6, accuracy: 1e-12)
        config.airQuality = AirQualitySettings(source: .openWeatherMap)
        XCTAssertEqual(CallCost.airQualityPerPlace(config), 1)
        let settings = AirQualitySettings(source: .openWeatherMap)
        XCTAssertEqual(
            settings.makeSource(upstream, forecast: ForecastSettings(), apiKey: Secret("k"), sharingQuota: true).name,
            .openWeatherMap)
        XCTAssertEqual(
            AirQualitySettings(pollen: false).makeSource(
                upstream, forecast: ForecastSettings(), apiKey: nil, sharingQuota: true
            )
            .callsPerPlace, 1.0)
    }
}

extension Result where Failure == WeatherFetchError {
    /// The failure's message, nil for a success.
    var failureMessage: String? {
        if case .failure(let error) = self { return error.message }
        return nil
    }
}

extension AirQualityDecodingTests {
    /// As the forecast's: in Kathmandu (UTC+5:45) the hours fall at :15 past UTC hours, and at
    /// 17:45 local the step at 18:00 local is hour 1.
    func testHoursCountFromTheLocalWholeHourInAZoneOffByAQuarterHour() throws {
        let now = 1_781_524_800  // 12:00Z, 17:45 local
        let times = (0..<3).map { now - 2_700 + 3600 * $0 }  // 17:00, 18:00, 19:00 local
        let body = """
            {"utc_offset_seconds":20700,"current":{"time":\(now),"european_aqi":30},
             "hourly":{"time":\(times),"european_aqi":[30,45,20],"us_aqi":[null,null,null]}}
            """
        let report = try OpenMeteoAirQuality.decode(Array(body.utf8), places: [berlin], forecast: forecast)[0].get()
        XCTAssertEqual(report.hourly.map(\.hoursAhead), [1, 2])
        XCTAssertEqual(report.hourly.map(\.indices.european), [45, 20])
    }

    /// Paris leaves summer time at 01:00Z on 25 October 2026. The answer's `utc_offset_seconds`
    /// (+2 h) is the offset of now only: after the change 23:00 local is 22:00Z, and each day's
    /// last hour stays that day's. `timezone` from the answer, or the place's own, says so.
    func testDailyMaximaFollowDaylightSavingAcrossTheWeek() throws {
        let now = 1_792_872_000  // 2026-10-24 20:00Z, 22:00 in Paris
        let midnight = 1_792_792_800  // 2026-10-23 22:00Z, local midnight of the 24th
        let times = (0..<(24 * 3 + 1)).map { midnight + 3600 * $0 }  // the 25th has 25 hours
        // Every hour 10, but 23:00 local of each day: 40 on the 24th, 50 the 25th, 60 the 26th.
        let lastHours = [midnight + 23 * 3600: 40, midnight + 48 * 3600: 50, midnight + 72 * 3600: 60]
        let european = times.map { lastHours[$0] ?? 10 }
        func report(answerZone: String?, place: Place) throws -> AirQualityReport {
            let zone = answerZone.map { #""timezone":"\#($0)","# } ?? ""
            let body = """
                {"utc_offset_seconds":7200,\(zone)"current":{"time":\(now),"european_aqi":30},
                 "hourly":{"time":\(times),"european_aqi":\(european),"us_aqi":\(european.map { _ in 0 })}}
                """
            return try OpenMeteoAirQuality.decode(Array(body.utf8), places: [place], forecast: forecast)[0].get()
        }
        let paris = Place(name: "Paris", latitude: 48.85, longitude: 2.35, timezone: "Europe/Paris")
        for answered in [
            try report(answerZone: "Europe/Paris", place: berlin), try report(answerZone: nil, place: paris),
        ] {
            XCTAssertEqual(answered.daily.map(\.daysAhead), [0, 1, 2])
            XCTAssertEqual(answered.daily.map(\.indicesMax.european), [40, 50, 60])
        }
        let fixed = try report(answerZone: nil, place: berlin)
        XCTAssertEqual(fixed.daily.map(\.indicesMax.european), [40, 10, 50], "no zone: the answer's offset alone")
    }
}
