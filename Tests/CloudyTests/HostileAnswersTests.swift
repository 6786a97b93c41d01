import Foundation
import XCTest

@testable import Cloudy

/// Answers a weather API should never send, from a black-box review that fed the exporter
/// hostile upstreams: what of them reaches `/metrics`.
final class HostileAnswersTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    /// The Open-Meteo fixture with its `"timezone"` value replaced by `zone` (JSON-escaped).
    func openMeteo(zone: String) throws -> WeatherSnapshot {
        let quoted = String(decoding: try JSONEncoder().encode(zone), as: UTF8.self)
        return try openMeteo(replacing: #""timezone":"Europe/Berlin""#, with: #""timezone":"# + quoted)
    }

    /// The Open-Meteo fixture with `text` (once) replaced by `replacement`, decoded.
    func openMeteo(replacing text: String, with replacement: String) throws -> WeatherSnapshot {
        let fixture = String(decoding: try TestPaths.fixtureBytes("open-meteo-forecast.json"), as: UTF8.self)
        let edited = fixture.replacingOccurrences(of: text, with: replacement)
        XCTAssertNotEqual(edited, fixture)
        return try XCTUnwrap(
            OpenMeteoProvider.decode(
                Array(edited.utf8), places: [berlin], forecast: ForecastSettings(days: 7, hours: 24)
            )
            .first?.get())
    }

    /// `weather_location_info`'s `timezone` label for `snapshot` of `place`.
    func zoneLabel(_ place: Place, _ snapshot: WeatherSnapshot) -> String? {
        var page = MetricFamilies()
        let status = PlaceStatus(place: place, snapshot: snapshot, lastSuccess: 1, lastAttempt: 1)
        MetricsViewModel(status: status, units: UnitSettings(), provider: .openMeteo, now: 1, staleAfter: 10)
            .addSamples(to: &page)
        let text = String(buffer: RenderedMetrics(page: page, processMetrics: { MetricFamilies() }).prometheus)
        let line = text.split(separator: "\n").first { $0.hasPrefix("weather_location_info{") }
        return line?.split(separator: ",").first { $0.hasPrefix("timezone=") }.map(String.init)
    }

    func testAnAnswersZoneNoMachineKnowsIsNoZone() throws {
        // It became the timezone label as sent: 100 KB (over a Prometheus label_value_length_limit,
        // which drops the whole scrape), a NUL, a right-to-left override; and it decided the days.
        for zone in ["Mars/Olympus_Mons", "Europe/Berlin\u{0}\u{202E}<b>" + String(repeating: "Z", count: 100_000)] {
            let snapshot = try openMeteo(zone: zone)
            XCTAssertNil(snapshot.timezone)
            XCTAssertEqual(zoneLabel(berlin, snapshot), #"timezone="""#)
            XCTAssertEqual(snapshot.daily.map(\.daysAhead), Array(0..<7), "days by the answer's offset")
        }
        let known = try openMeteo(zone: "Europe/Berlin")
        XCTAssertEqual(known.timezone, "Europe/Berlin")
        XCTAssertEqual(zoneLabel(berlin, known), #"timezone="Europe/Berlin""#)
    }

    /// The warnings in force at Berlin, which asks NWS, when NWS lists `listed`.
    func inForce(_ listed: [WeatherWarning]) -> (PlaceWarnings, page: String) {
        var place = berlin
        place.warningSources = [.nws]
        var board = WarningBoard()
        board.record(place: place.name, source: "nws", .success(listed), at: 1_781_524_800)
        let warnings = PlaceWarnings(
            status: PlaceStatus(place: place, lastAttempt: 1_781_524_800),
            settings: WarningSettings(sources: [WarningSourceSettings(name: .nws)]), provider: .openMeteo,
            board: board, now: 1_781_524_860, staleAfter: 1800)
        var page = MetricFamilies()
        WarningFamilies.addSamples(warnings, board: board, to: &page)
        return (warnings, String(buffer: RenderedMetrics(page: page, processMetrics: { MetricFamilies() }).prometheus))
    }

    func warning(_ id: String, _ severity: WarningSeverity = .minor, onset: Double = 1_781_500_000) -> WeatherWarning {
        WeatherWarning(id: id, source: "nws", event: "Wind Advisory", severity: severity, onset: onset)
    }

    func testIdsThatOnlyDifferInWhatALabelDropsAreOneWarning() {
        // Two series with one label set: Prometheus keeps one value, an OpenMetrics parser
        // rejects the page.
        let long = String(repeating: "x", count: 250)
        let (warnings, page) = inForce([
            warning("urn:oid:abc"), warning("urn:oid:a\u{200B}bc", .severe, onset: 1_781_510_000),
            warning(long + "1"), warning(long + "2"), warning("urn:oid:other"),
        ])
        XCTAssertEqual(warnings.inForce.map(\.id), ["urn:oid:a\u{200B}bc", "urn:oid:other", long + "1"])
        let onsets = page.split(separator: "\n").filter { $0.hasPrefix("weather_warning_onset_timestamp_seconds{") }
        XCTAssertEqual(onsets.count, 3)
        XCTAssertEqual(Set(onsets.map { $0.split(separator: "}")[0] }).count, 3, "one series per label set")
        XCTAssertTrue(page.contains(#"weather_warnings{location="Berlin",severity="minor"} 2"#), page)
    }

    func testAPlaceShowsAtMostFiftyWarningsTheMostSevereFirst() {
        let listed = (0..<3000).map { warning("urn:oid:\($0)") } + [warning("urn:oid:red", .extreme)]
        let (warnings, page) = inForce(listed)
        XCTAssertEqual(warnings.inForce.count, 50)
        XCTAssertEqual(warnings.inForce.first?.id, "urn:oid:red")
        XCTAssertEqual(page.split(separator: "\n").filter { $0.hasPrefix("weather_warning_info{") }.count, 50)
        // The count is what is in force, the warnings not shown too: more than the info series
        // says the list was cut.
        XCTAssertTrue(page.contains(#"weather_warnings{location="Berlin",severity="minor"} 3000"#), page)
        XCTAssertTrue(page.contains(#"weather_warnings{location="Berlin",severity="extreme"} 1"#), page)
    }

    func testValuesNoWeatherHasHadAreNoSamples() throws {
        var impossible = CurrentConditions(
            temperatureCelsius: 1e308, apparentTemperatureCelsius: -300, dewPointCelsius: .nan,
            relativeHumidityRatio: 2.5, windSpeedMetersPerSecond: -1.4, windGustMetersPerSecond: 24,
            windDirectionDegrees: 720, pressureMslPascals: 101_450, cloudCoverRatio: -0.1, precipitationMeters: -0.003,
            uvIndex: 1e20, visibilityMeters: -1)
        impossible.conditionCode = 2
        var day = DailyForecast(daysAhead: 0)
        (day.temperatureMaxCelsius, day.temperatureMinCelsius) = (9e307, -1e308)
        (day.precipitationSumMeters, day.precipitationProbabilityRatio) = (0.0035, 0.87)
        let hour = HourlyForecast(
            hoursAhead: 1, time: 1_781_528_400, temperatureCelsius: -89.2, windSpeedMetersPerSecond: 1e9)
        let store = WeatherStore(
            config: Config(places: [berlin]), telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics",
            now: 0, processMetrics: { MetricFamilies() })
        let answer = WeatherSnapshot(current: impossible, daily: [day], hourly: [hour])
        store.record([(berlin, nil, .success(answer))], at: 1)
        let kept = try XCTUnwrap(store.statuses.first?.snapshot)
        let now = kept.current
        XCTAssertEqual(
            [
                now.temperatureCelsius, now.apparentTemperatureCelsius, now.dewPointCelsius, now.relativeHumidityRatio,
                now.windSpeedMetersPerSecond, now.windDirectionDegrees, now.cloudCoverRatio, now.precipitationMeters,
                now.uvIndex, now.visibilityMeters,
            ],
            Array(repeating: nil, count: 10))
        XCTAssertEqual(now.windGustMetersPerSecond, 24, "the rest of the answer stays")
        XCTAssertEqual(now.pressureMslPascals, 101_450)
        XCTAssertEqual(now.conditionCode, 2)
        XCTAssertNil(kept.daily[0].temperatureMaxCelsius)
        XCTAssertNil(kept.daily[0].temperatureMinCelsius)
        XCTAssertEqual(kept.daily[0].precipitationSumMeters, 0.0035)
        XCTAssertEqual(kept.daily[0].precipitationProbabilityRatio, 0.87)
        XCTAssertEqual(kept.hourly[0].temperatureCelsius, -89.2, "Vostok's record stays")
        XCTAssertNil(kept.hourly[0].windSpeedMetersPerSecond)
        XCTAssertEqual(store.statuses.first?.isUp, true, "what is left is a success")
    }

    func testAirQualityNoAirHasHadIsNoSample() {
        let report = AirQualityReport(
            indices: AirQualityIndices(european: 1e308, epa: 66), concentrations: [.pm25: -1e-6, .pm10: 14.2e-6],
            pollen: [.grass: 35.2, .birch: -3],
            hourly: [HourlyAirQuality(hoursAhead: 1, time: 1, indices: AirQualityIndices(european: .nan, epa: 1e300))],
            daily: [
                DailyAirQuality(daysAhead: 0, indicesMax: AirQualityIndices(european: 64), pollenMax: [.grass: 1e9])
            ])
        let kept = AirQualityStatus().recording(.success(report), at: 1).report
        XCTAssertEqual(kept?.indices, AirQualityIndices(epa: 66))
        XCTAssertEqual(kept?.concentrations, [.pm10: 14.2e-6])
        XCTAssertEqual(kept?.pollen, [.grass: 35.2])
        XCTAssertEqual(kept?.hourly.first?.indices, AirQualityIndices())
        XCTAssertEqual(kept?.daily.first?.indicesMax, AirQualityIndices(european: 64))
        XCTAssertEqual(kept?.daily.first?.pollenMax, [:])
    }

    func testAWeatherCodeWithAFractionIsNoCode() throws {
        let half = try openMeteo(replacing: #""weather_code":2,"#, with: #""weather_code":99.5,"#)
        XCTAssertNil(half.current.conditionCode, "not 99, thunderstorm with heavy hail")
        let whole = try openMeteo(replacing: #""weather_code":2,"#, with: #""weather_code":3.0,"#)
        XCTAssertEqual(whole.current.conditionCode, 3)
    }
}

extension HostileAnswersTests {
    /// A warning's texts on the place page: escaped by the template, and without what a browser
    /// would act on or hide (a right-to-left override turned the rest of the text around).
    func testAWarningsTextsLoseControlAndFormatCharactersOnThePage() throws {
        var hostile = warning("urn:oid:x")
        hostile.description = "Gusts\u{202E} to 90 km/h.\u{1B}[2J\nStay\u{2028}inside\u{0}\u{85}now"
        hostile.instruction = "Secure\u{200B} objects.\r\nKeep away from trees."
        hostile.sender = "NWS\u{7} Upton\nNY"
        let (warnings, _) = inForce([hostile])
        var status = PlaceStatus(place: berlin, lastAttempt: 1_781_524_800)
        status.lastError = "open-meteo: HTTP 400: bad\u{1B}[31m\u{202E}reason\ntwo"
        let item = try XCTUnwrap(WarningsViewModel(warnings, status: status, notation: .h24)?.items.first)
        XCTAssertEqual(item.description, "Gusts to 90 km/h.[2J\nStay\ninside\nnow")
        XCTAssertEqual(item.instruction, "Secure objects.\nKeep away from trees.")
        XCTAssertEqual(item.issuer, "NWS Upton NY via nws")
        let card = StatusViewModel(status: status, units: UnitSettings(), now: 1_781_524_860, staleAfter: 3600)
        XCTAssertEqual(card.stateDetail, "open-meteo: HTTP 400: bad[31mreason two")
    }
}
