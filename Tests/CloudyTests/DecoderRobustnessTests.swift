import Foundation
import XCTest

@testable import Cloudy

/// Thousands of damaged answers (bit flips, cuts, splices, deep nesting, absurd numbers) fed to
/// every provider's decoder: each gives a clean error or a valid snapshot, never a crash.
final class DecoderRobustnessTests: XCTestCase {
    /// A small deterministic generator, so a failure reproduces.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    let places = [
        Place(name: "Berlin", latitude: 52.52, longitude: 13.41),
        Place(name: "London", latitude: 51.5085, longitude: -0.1257),
        Place(name: "New York", latitude: 40.7143, longitude: -74.006),
    ]

    /// Decodes `body`, checks what decoded, and says how many places did: the fuzz tests
    /// count them, so that a decoder refusing every damaged answer does not pass unchecked.
    @discardableResult
    func check(_ body: [UInt8], places: [Place], render: Bool = true) -> Int {
        let outcomes = OpenMeteoProvider.decode(body, places: places, forecast: ForecastSettings())
        XCTAssertEqual(outcomes.count, places.count)
        var decoded = 0
        for case .success(let snapshot) in outcomes {
            decoded += 1
            XCTAssertTrue(snapshot.daily.allSatisfy { (0..<7).contains($0.daysAhead) })
            XCTAssertTrue(snapshot.hourly.allSatisfy { (1...24).contains($0.hoursAhead) })
        }
        // A snapshot that decoded must also render (rendering every one would only slow the test).
        if render { self.render(Array(zip(places, outcomes.map { try? $0.get() })), provider: .openMeteo) }
        return decoded
    }

    /// Renders the page of `snapshots` in every unit, and the HTML pages (landing and each place's).
    func render(_ snapshots: [(Place, WeatherSnapshot?)], provider: ProviderName) {
        var page = MetricFamilies()
        let statuses = snapshots.map { PlaceStatus(place: $0.0, snapshot: $0.1, lastSuccess: 1, lastAttempt: 1) }
        for status in statuses {
            MetricsViewModel(
                status: status,
                units: UnitSettings(temperature: [.celsius, .fahrenheit], windSpeed: WindSpeedUnit.allCases),
                provider: provider, now: 1, staleAfter: 10
            ).addSamples(to: &page)
        }
        _ = RenderedMetrics(page: page, processMetrics: ProcessMetrics.page)
        let pages = HTMLPages(
            config: Config(places: statuses.map(\.place)), statuses: statuses, readiness: Readiness(statuses),
            telemetryPath: "/metrics", now: 1)
        _ = pages.landing
        for status in statuses { XCTAssertNotNil(pages.places[status.place.name]) }
    }

    /// Times an answer made absurd but finite (the observation at 1e300, a sunrise at -1e20)
    /// decode, and every page renders them: no clock time on the HTML pages traps.
    func testAbsurdTimesRenderOnEveryPage() throws {
        let text = String(decoding: try TestPaths.fixtureBytes("open-meteo-forecast.json"), as: UTF8.self)
        for absurd in ["1e300", "-1e300", "1e20", "-1e20", "9.3e18"] {
            let body = text.replacingOccurrences(of: "1781525700", with: absurd)
                .replacingOccurrences(of: "1781491369", with: absurd)
            let outcomes = OpenMeteoProvider.decode(Array(body.utf8), places: [places[0]], forecast: ForecastSettings())
            let snapshot = try XCTUnwrap(try? outcomes.first?.get(), "\(absurd) decodes")
            render([(places[0], snapshot)], provider: .openMeteo)
        }
    }

    /// Finite numbers that a conversion takes past a Double (1e308 hPa in pascals, −1e308 °C in
    /// °F) are no sample, as a value the provider did not send is: they were published as ±Inf.
    func testAValueConvertedPastADoubleIsNoSample() throws {
        let text = String(decoding: try TestPaths.fixtureBytes("open-meteo-forecast.json"), as: UTF8.self)
        let body = text.replacingOccurrences(of: #""pressure_msl":1014.5"#, with: #""pressure_msl":1e308"#)
            .replacingOccurrences(of: #""temperature_2m":24.5"#, with: #""temperature_2m":-1e308"#)
        let snapshot = try OpenMeteoProvider.decode(
            Array(body.utf8), places: [places[0]], forecast: ForecastSettings())[0]
            .get()
        var page = MetricFamilies()
        MetricsViewModel(
            status: PlaceStatus(place: places[0], snapshot: snapshot, lastSuccess: 1, lastAttempt: 1),
            units: UnitSettings(temperature: [.celsius, .fahrenheit]), provider: .openMeteo, now: 1, staleAfter: 10
        ).addSamples(to: &page)
        let samples = page.families.flatMap { family in family.samples.map { (family.descriptor.name, $0.value) } }
        XCTAssertEqual(samples.filter { !$0.1.isFinite }.map(\.0), [])
        let names = Set(samples.map(\.0))
        XCTAssertFalse(names.contains("weather_pressure_msl_pascals"))
        XCTAssertFalse(names.contains("weather_temperature_fahrenheit"))
        XCTAssertTrue(names.contains("weather_temperature_celsius"), "−1e308 °C is a Double, if an absurd one")
        XCTAssertTrue(names.contains("weather_relative_humidity_ratio"), "the rest of the place is there")
    }

    func testMutatedAnswersNeverCrash() throws {
        let single = try TestPaths.fixtureBytes("open-meteo-forecast.json")
        let multi = try TestPaths.fixtureBytes("open-meteo-forecast-multi.json")
        var random = SplitMix(state: 20_261_122)
        let absurd = ["1e308", "-1e308", "1e999", "99999999999999999999", "-0", "0.0000000000000000001"]
        let other = ["null", "\"x\"", "[]", "{}", "true"]
        // Each source with every digit run or value replaced, made once rather than per round.
        func replaced(_ source: [UInt8], _ target: String, by choices: [String]) -> [String: [UInt8]] {
            let text = String(decoding: source, as: UTF8.self)
            return Dictionary(
                uniqueKeysWithValues: choices.map { ($0, Array(text.replacingOccurrences(of: target, with: $0).utf8)) })
        }
        let absurdIn = [replaced(single, "1781", by: absurd), replaced(multi, "1781", by: absurd)]
        let otherIn = [replaced(single, "24.5", by: other), replaced(multi, "24.5", by: other)]
        var decoded = 0
        for round in 0..<3000 {
            let (source, targets) = round % 2 == 0 ? (single, [places[0]]) : (multi, places)
            var body = source
            switch round % 5 {
            case 0:  // bit flips
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let index = Int.random(in: 0..<body.count, using: &random)
                    body[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                }
            case 1:  // cut short
                body = Array(body.prefix(Int.random(in: 0..<body.count, using: &random)))
            case 2:  // splice a piece of the answer somewhere else
                let start = Int.random(in: 0..<body.count, using: &random)
                let piece = body[start..<min(body.count, start + Int.random(in: 1...200, using: &random))]
                body.insert(contentsOf: piece, at: Int.random(in: 0...body.count, using: &random))
            case 3:  // digits replaced by absurd numbers
                body = absurdIn[round % 2][absurd.randomElement(using: &random)!]!
            default:  // values swapped for other JSON types
                body = otherIn[round % 2][other.randomElement(using: &random)!]!
            }
            decoded += check(body, places: targets, render: round % 25 == 0)
        }
        XCTAssertGreaterThan(decoded, 700, "places decoded of 3,000 damaged answers (1,478 today): the checks ran")
    }

    /// Damages `source` the ways the Open-Meteo test does, `rounds` times, deterministically.
    func mutations(of source: [UInt8], rounds: Int, seed: UInt64) -> [[UInt8]] {
        var random = SplitMix(state: seed)
        return (0..<rounds).map { round in
            var body = source
            switch round % 3 {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let index = Int.random(in: 0..<body.count, using: &random)
                    body[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                }
            case 1:
                body = Array(body.prefix(Int.random(in: 0..<body.count, using: &random)))
            default:
                let start = Int.random(in: 0..<body.count, using: &random)
                let piece = body[start..<min(body.count, start + Int.random(in: 1...200, using: &random))]
                body.insert(contentsOf: piece, at: Int.random(in: 0...body.count, using: &random))
            }
            return body
        }
    }

    func testMutatedOpenWeatherMapAnswersNeverCrash() throws {
        let current = try TestPaths.fixtureBytes("openweathermap-current.json")
        let forecast = try TestPaths.fixtureBytes("openweathermap-forecast.json")
        let settings = ForecastSettings()
        var decoded = 0
        for (index, body) in mutations(of: current, rounds: 1000, seed: 7).enumerated() {
            _ = OpenWeatherMapProvider.decode(current: body, forecast: forecast, place: places[0], settings: settings)
            let damagedForecast = mutations(of: forecast, rounds: 1, seed: UInt64(index))[0]
            if case .success(let snapshot) = OpenWeatherMapProvider.decode(
                current: current, forecast: damagedForecast, place: places[0], settings: settings)
            {
                decoded += 1
                XCTAssertTrue(snapshot.daily.allSatisfy { (0..<7).contains($0.daysAhead) })
            }
        }
        XCTAssertGreaterThan(decoded, 60, "decoded of 1,000 damaged forecasts (120 decode today): the checks ran")
        for absurd in ["1e308", "-1e308", "99999999999999999999"] {
            let text = String(decoding: forecast, as: UTF8.self).replacingOccurrences(of: "1781535600", with: absurd)
            _ = OpenWeatherMapProvider.decode(
                current: current, forecast: Array(text.utf8), place: places[0], settings: settings)
            let now = String(decoding: current, as: UTF8.self).replacingOccurrences(
                of: "\"timezone\":7200", with: "\"timezone\":\(absurd)")
            _ = OpenWeatherMapProvider.decode(
                current: Array(now.utf8), forecast: forecast, place: places[0], settings: settings)
        }
    }

    func testMutatedMETNorwayAnswersNeverCrash() throws {
        let source = try TestPaths.fixtureBytes("met-no-compact.json")
        var decoded = 0
        for body in mutations(of: source, rounds: 1500, seed: 11) {
            if case .success(let snapshot) = METNorwayProvider.decode(
                body, place: places[0], settings: ForecastSettings(), offset: { _ in 3600 })
            {
                decoded += 1
                XCTAssertTrue(snapshot.hourly.allSatisfy { (1...24).contains($0.hoursAhead) })
            }
        }
        XCTAssertGreaterThan(decoded, 80, "decoded of 1,500 damaged answers (164 decode today): the checks ran")
        let text = String(decoding: source, as: UTF8.self)
        for broken in ["9999-99-99T99:99:99Z", "2026-13-40T25:61:61Z", "0000-00-00T00:00:00Z", ""] {
            let body = Array(text.replacingOccurrences(of: "2026-06-15T13:00:00Z", with: broken).utf8)
            _ = METNorwayProvider.decode(body, place: places[0], settings: ForecastSettings(), offset: { _ in 0 })
        }
    }

    func testMutatedDarkSkyAndOneCallAlertAnswersNeverCrash() throws {
        let source = try TestPaths.fixtureBytes("pirateweather-forecast.json")
        var decoded = 0
        for (round, body) in mutations(of: source, rounds: 1500, seed: 13).enumerated() {
            if case .success(let snapshot) = DarkSkyProvider.decode(
                body, place: places[2], settings: ForecastSettings())
            {
                decoded += 1
                XCTAssertTrue(snapshot.daily.allSatisfy { (0..<7).contains($0.daysAhead) })
                XCTAssertTrue(snapshot.hourly.allSatisfy { (1...24).contains($0.hoursAhead) })
                XCTAssertNotNil(snapshot.warnings)
                if round % 25 == 0 { render([(places[2], snapshot)], provider: .darkSky) }
            }
        }
        XCTAssertGreaterThan(decoded, 100, "decoded of 1,500 damaged answers (213 decode today): the checks ran")
        let text = String(decoding: source, as: UTF8.self)
        for absurd in ["1e308", "-1e308", "99999999999999999999", "-999", "null", "\"x\""] {
            for field in ["\"time\":1781", "\"offset\":-4.0", "\"expires\":1781740800", "\"temperature\":23.4"] {
                let name = field.split(separator: ":")[0]
                let body = Array(text.replacingOccurrences(of: field, with: "\(name):\(absurd)").utf8)
                _ = DarkSkyProvider.decode(body, place: places[2], settings: ForecastSettings())
            }
        }
        let alerts = try TestPaths.fixtureBytes("openweathermap-onecall-alerts.json")
        for body in mutations(of: alerts, rounds: 500, seed: 17) {
            _ = OpenWeatherMapProvider.decode(
                oneCall: body, place: places[0], settings: ForecastSettings(days: 0, hours: 0))
        }
    }

    func testDeepNestingIsAnErrorNotAStackOverflow() {
        for depth in [1000, 100_000] {
            check(
                Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8),
                places: places)
            check(
                Array((String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8),
                places: [places[0]])
            let nestedCurrent =
                "{\"current\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
            check(Array(nestedCurrent.utf8), places: [places[0]])
        }
    }

    /// The three warning services' answers, damaged: a clean error or warnings that render on
    /// the page and the place's HTML view.
    func testMutatedWarningAnswersNeverCrash() throws {
        var place = places[0]
        place.warningSources = [.nws]  // every answer is recorded as this source's
        var rendered = 0
        for (fixture, seed) in [
            ("nws-alerts-active.json", UInt64(21)), ("met-norway-metalerts.json", 22), ("brightsky-alerts.json", 23),
        ] {
            let source = try TestPaths.fixtureBytes(fixture)
            for (round, body) in mutations(of: source, rounds: 700, seed: seed).enumerated() {
                let outcome: Result<[WeatherWarning], WeatherFetchError>
                switch seed {
                case 21: outcome = WeatherAPI.decode(NWSAlerts.self, from: body, as: "nws").map(\.warnings)
                case 22: outcome = WeatherAPI.decode(METAlerts.self, from: body, as: "met").map(\.warnings)
                default: outcome = WeatherAPI.decode(BrightSkyAlerts.self, from: body, as: "dwd").map(\.warnings)
                }
                guard round % 10 == 0, case .success = outcome else { continue }
                var board = WarningBoard()
                board.record(place: place.name, source: "nws", outcome, at: 1_781_524_800)
                let status = PlaceStatus(place: place, lastAttempt: 1_781_524_800)
                let warnings = PlaceWarnings(
                    status: status, settings: WarningSettings(sources: [WarningSourceSettings(name: .nws)]),
                    provider: .openMeteo, board: board, now: 1_781_524_860, staleAfter: 1800)
                var page = MetricFamilies()
                WarningFamilies.addSamples(warnings, board: board, to: &page)
                XCTAssertEqual(page.families.first { $0.descriptor.name == "weather_warnings" }?.samples.count, 5)
                _ = WarningsViewModel(warnings, status: status, notation: .h12)
                rendered += 1
            }
        }
        XCTAssertGreaterThan(rendered, 10, "some damaged answers still decode, and render")
    }
}
