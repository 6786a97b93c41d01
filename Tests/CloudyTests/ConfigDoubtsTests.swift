import XCTest

@testable import Cloudy

/// A `timezone:` far from the time at a place's longitude is likely another place's: a warning,
/// not a refusal, and none for the zones people live in that lie a few hours from solar time.
final class ConfigDoubtsTests: XCTestCase {
    let june = 1_781_524_800.0  // 2026-06-15, daylight saving time in the north

    func doubts(_ places: String) throws -> [String] {
        try ConfigLoader.parse(yaml: "locations:\n" + places).doubts(at: june)
    }

    func testAZoneHalfAWorldAwayIsDoubted() throws {
        XCTAssertEqual(
            try doubts("  - { name: New York, latitude: 40.71, longitude: -74.0, timezone: Asia/Tokyo }"),
            [
                #"location "New York": timezone Asia/Tokyo (UTC+9 now) is 10.1 hours from the time at its "#
                    + "longitude -74.0 (about UTC−5): its forecast days would be Asia/Tokyo's"
            ])
        XCTAssertEqual(
            try doubts("  - { name: Berlin, latitude: 52.52, longitude: 13.41, timezone: America/Chicago }").count, 1)
    }

    func testTheZonesPeopleLiveInAreNot() throws {
        let places = """
              - { name: Kiritimati, latitude: 1.87, longitude: -157.4, timezone: Pacific/Kiritimati }
              - { name: Apia, latitude: -13.83, longitude: -171.76, timezone: Pacific/Apia }
              - { name: Urumqi, latitude: 43.8, longitude: 87.6, timezone: Asia/Shanghai }
              - { name: Nome, latitude: 64.5, longitude: -165.4, timezone: America/Nome }
              - { name: Adak, latitude: 51.88, longitude: -176.66, timezone: America/Adak }
              - { name: Vigo, latitude: 42.24, longitude: -8.72, timezone: Europe/Madrid }
              - { name: Kathmandu, latitude: 27.7, longitude: 85.3, timezone: Asia/Kathmandu }
              - { name: Anadyr, latitude: 64.73, longitude: 177.5, timezone: Asia/Anadyr }
              - { name: Springfield, city: Springfield, timezone: Asia/Tokyo }
              - { name: Oslo, latitude: 59.91, longitude: 10.75 }
            """
        XCTAssertEqual(try doubts(places), [], "a city is not located yet; no zone, nothing to doubt")
    }
}

extension ConfigDoubtsTests {
    /// A threshold the config sets that the provider gives no daily value for, or with no days
    /// asked, cannot fire: said, but only for what the config sets, not for the defaults.
    func testAThresholdThatCannotFireIsDoubted() throws {
        let berlin = "locations:\n  - { name: Berlin, latitude: 52.52, longitude: 13.41 }\n"
        func doubts(_ yaml: String) throws -> [String] { try ConfigLoader.parse(yaml: yaml + berlin).doubts(at: june) }
        let met = "provider: { name: met-norway, user_agent: \"cloudy/1.0 ops@example.com\" }\n"
        XCTAssertEqual(try doubts(met), [], "the defaults say nothing")
        XCTAssertEqual(
            try doubts(met + "alerts: { gust: \"80 km/h\", wind: \"50 km/h\" }\n"),
            [
                "alerts.gust: met-norway gives no daily value for it, so it cannot fire (docs/providers.md); "
                    + "set it off to say so"
            ])
        XCTAssertEqual(
            try doubts("forecast: { days: 0 }\nalerts: { frost: \"2 °C\" }\n"),
            ["alerts: forecast.days is 0, so there is no daily forecast and no weather alert can fire"])
        XCTAssertEqual(try doubts("alerts: { uv: 6, gust: \"80 km/h\" }\n"), [], "Open-Meteo gives both")
        let ownUV = met + "locations:\n  - { name: Oslo, latitude: 59.91, longitude: 10.75, alerts: { uv: 6 } }\n"
        XCTAssertEqual(
            try ConfigLoader.parse(yaml: ownUV).doubts(at: june),
            [
                "alerts.uv of Oslo: met-norway gives no daily value for it, so it cannot fire (docs/providers.md); "
                    + "set it off to say so"
            ], "a place's own threshold is named with the place")
    }

    /// An air-quality threshold without `air_quality:` has no index to compare: said, as a
    /// threshold the provider lacks is; with `air_quality:` or at the default, nothing.
    func testAnAirQualityThresholdWithoutAirQualityIsDoubted() throws {
        let berlin = "locations:\n  - { name: Berlin, latitude: 52.52, longitude: 13.41 }\n"
        func doubts(_ yaml: String) throws -> [String] { try ConfigLoader.parse(yaml: yaml + berlin).doubts(at: june) }
        let without = [
            "alerts.air_quality: there is no air_quality: section, so there is no index to compare and it "
                + "cannot fire; add air_quality: {} or set it off to say so"
        ]
        XCTAssertEqual(try doubts("alerts: { air_quality: 60 }\n"), without)
        XCTAssertEqual(try doubts("alerts: { air_quality: 60 }\nair_quality: {}\n"), [])
        XCTAssertEqual(try doubts("alerts: { air_quality: 100, frost: \"2 °C\" }\n"), [], "the default says nothing")
        XCTAssertEqual(try doubts("alerts: { air_quality: \"off\" }\n"), [], "off says so already")
        let own = "locations:\n  - { name: Oslo, latitude: 59.91, longitude: 10.75, alerts: { air_quality: 50 } }\n"
        let named = own.replacingOccurrences(of: "name: Oslo", with: "name: \"Oslo\\nSentrum\"")
        XCTAssertEqual(
            try ConfigLoader.parse(yaml: named).doubts(at: june).first?.hasPrefix(
                #"alerts.air_quality of Oslo\nSentrum: "#),
            true, "one line, whatever the name holds")
        let frost = named.replacingOccurrences(of: "air_quality: 50", with: "frost: \"2 °C\"")
        XCTAssertEqual(try ConfigLoader.parse(yaml: frost).alertSummary, [#"alerts of Oslo\nSentrum: frost 2 °C"#])
        XCTAssertEqual(
            try ConfigLoader.parse(yaml: own).doubts(at: june),
            [
                "alerts.air_quality of Oslo: there is no air_quality: section, so there is no index to compare and "
                    + "it cannot fire; add air_quality: {} or set it off to say so"
            ])
    }

    /// OpenWeatherMap's air pollution gives no European index: a threshold set for it cannot
    /// fire, and is said to; at the default, nothing.
    func testAnAirQualityThresholdWithTheOpenWeatherMapSourceIsDoubted() throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("aq-key-\(UUID().uuidString)")
        try "k3y\n".write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let owm = """
            provider: {name: openweathermap, api_key_file: \(keyFile.path)}
            air_quality: {source: openweathermap}
            locations:
              - {name: Brussels, latitude: 50.85, longitude: 4.35}

            """
        func doubts(_ yaml: String) throws -> [String] { try ConfigLoader.parse(yaml: owm + yaml).doubts(at: june) }
        XCTAssertEqual(
            try doubts("alerts: {air_quality: 80}\n"),
            [
                "alerts.air_quality: air_quality.source openweathermap gives no European index, so it cannot fire "
                    + "(docs/providers.md); set it off to say so"
            ])
        XCTAssertEqual(try doubts(""), [], "the default says nothing")
    }

    /// `air_quality:` with no value is off like every empty key, though it reads as on (`{}`
    /// turns it on): said, so that no one waits for air quality that is never asked.
    func testAnEmptyAirQualityIsSaidToBeOff() throws {
        let place = "locations:\n  - { name: Oslo, latitude: 59.91, longitude: 10.75 }\n"
        let off =
            "air_quality: has no value, which counts as absent: air quality is off; write air_quality: {} to "
            + "turn it on with the defaults, or remove the key"
        for empty in ["air_quality:", "air_quality: ~", "air_quality: null"] {
            let config = try ConfigLoader.parse(yaml: empty + "\n" + place)
            XCTAssertNil(config.airQuality, empty)
            XCTAssertEqual(config.doubts(at: june), [off], empty)
        }
        XCTAssertEqual(try ConfigLoader.parse(yaml: "air_quality: {}\n" + place).doubts(at: june), [])
        XCTAssertEqual(try ConfigLoader.parse(yaml: place).doubts(at: june), [], "absent: nothing to say")
    }
}

extension ConfigDoubtsTests {
    /// Names that differ only in case are two places and two series that read alike: a warning
    /// naming them all, once, and none for names that only share letters.
    func testNamesThatDifferOnlyInCaseAreDoubted() throws {
        let places = """
              - { name: Berlin, latitude: 52.52, longitude: 13.41 }
              - { name: Oslo, latitude: 59.91, longitude: 10.75 }
              - { name: berlin, latitude: 52.5, longitude: 13.4 }
              - { name: BERLIN, latitude: 52.5, longitude: 13.4 }
              - { name: Berlin-Mitte, latitude: 52.52, longitude: 13.4 }
            """
        XCTAssertEqual(
            try doubts(places),
            [
                #"locations "Berlin", "berlin", "BERLIN" differ only in case: their series read alike on a "#
                    + "dashboard; rename one, or remove it if they are the same place"
            ])
        XCTAssertEqual(try doubts("  - { name: Berlin, latitude: 52.52, longitude: 13.41 }"), [])
    }
}
