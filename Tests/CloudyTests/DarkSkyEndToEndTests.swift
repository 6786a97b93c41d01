import Foundation
import XCTest

@testable import Cloudy

/// `provider.name: dark-sky`: the real binary against the fake's Pirate Weather, at debug level so
/// that every line the exporter can write about a request is written. The key is one nobody could
/// miss; it travels in the request path, and the log, the errors and the pages show that path
/// with `<redacted>` in its place.
final class DarkSkyEndToEndTests: FakeWeatherTestCase {
    let key = "KEY-SPOT-ME-8d1f2e"
    let shownPath = "/forecast/<redacted>/40.7143,-74.006"

    /// dark-sky at the fake every second, with New York and `places` (YAML list items).
    func config(units: String = "", places: String = "") -> String {
        """
        provider:
          name: dark-sky
          url: \(fake.baseURL)
        refresh:
          interval: 1s
        \(units)locations:
          - {name: New York, latitude: 40.7143, longitude: -74.006}
        \(places)
        """
    }

    func testFamiliesOneRequestPerPlaceAndTheKeyNeverShown() throws {
        try fake.control("dark-sky", "{\"key\": \"\(key)\"}")
        let exporter = try ExporterProcess(
            config: config(
                units: "units:\n  temperature: [celsius, fahrenheit]\n",
                places: "  - {name: Boston, latitude: 42.3601, longitude: -71.0589}\n"),
            extraArguments: ["--log.level", "debug"], environment: ["CLOUDY_API_KEY": key])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        let place = "location=\"New York\""
        assertClose(metrics["weather_temperature_celsius{\(place)}"], 23.4)
        assertClose(metrics["weather_temperature_fahrenheit{\(place)}"], 23.4 * 9 / 5 + 32)
        assertClose(metrics["weather_dew_point_celsius{\(place)}"], 19.55)
        assertClose(metrics["weather_pressure_msl_pascals{\(place)}"], 101_370)
        assertClose(metrics["weather_visibility_meters{\(place)}"], 16_090)
        assertClose(metrics["weather_relative_humidity_ratio{\(place)}"], 0.79)
        assertClose(metrics["weather_condition_code{\(place)}"], 2)
        XCTAssertNotNil(
            metrics[
                "weather_condition_info{\(place),code=\"2\",condition=\"Partly cloudy\",icon=\"partly-cloudy-day\"}"])
        assertClose(metrics["weather_forecast_hourly_temperature_celsius{\(place),hour=\"1\"}"], 24.1)
        assertClose(metrics["weather_forecast_daily_temperature_max_celsius{\(place),day=\"0\"}"], 29.5)
        assertClose(metrics["weather_forecast_daily_precipitation_sum_meters{\(place),day=\"2\"}"], 0.57 * 24 / 1000)
        assertClose(metrics["weather_forecast_daily_sunrise_timestamp_seconds{\(place),day=\"0\"}"], 1_781_515_450)
        XCTAssertNil(metrics["weather_forecast_daily_wind_speed_max_meters_per_second{\(place),day=\"0\"}"])
        let info =
            "weather_location_info{\(place),latitude=\"40.7143\",longitude=\"-74.006\","
            + "timezone=\"America/New_York\",provider=\"dark-sky\"}"
        XCTAssertNotNil(metrics[info], metrics.keys.filter { $0.hasPrefix("weather_location_info") }.description)

        let asked = try fake.requests().compactMap { $0["path"] as? String }.filter { $0.hasPrefix("/forecast/") }
        XCTAssertTrue(asked.contains("/forecast/\(key)/40.7143,-74.006"), asked.description)
        XCTAssertTrue(asked.contains("/forecast/\(key)/42.3601,-71.0589"), asked.description)
        let query = try XCTUnwrap(try fake.requests().first?["query"] as? [String: String])
        XCTAssertEqual(query, ["units": "si", "exclude": "minutely", "version": "2"])
        XCTAssertTrue(exporter.log.contains(shownPath), exporter.log)

        // The key is refused now: the places go down and say why, with the path redacted.
        try fake.control("dark-sky", "{\"key\": \"another-key\"}")
        _ = try exporter.metrics { $0["weather_up{\(place)}"] == 0 }
        let reason = "invalid API key) (GET \(shownPath))"
        let landing = String(decoding: try exporter.get("/").body, as: UTF8.self)
        let escaped = reason.replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        XCTAssertTrue(landing.contains(escaped), landing)
        XCTAssertTrue(exporter.log.contains(reason), exporter.log)
        var everything = exporter.log + landing
        for path in ["/metrics", "/readyz", "/places/New%20York"] {
            everything += String(decoding: try exporter.get(path).body, as: UTF8.self)
        }
        XCTAssertTrue(everything.contains("Invalid authentication credentials"), everything)
        XCTAssertFalse(everything.contains(key), "the key appears nowhere")
        XCTAssertFalse(everything.contains("SPOT-ME"))
    }

    /// The gateway's 429 with `RateLimit-Remaining: 0`: the month is spent, nothing is asked until
    /// the key's month starts afresh, `RateLimit-Reset` seconds later (five days here, not the
    /// UTC month's turn: a key's month starts on the day it was made; the fake's `Retry-After`
    /// says the same), logged once, shown on /readyz.
    func testASpentMonthIsAQuietPeriodUntilTheKeysMonthStartsAfresh() throws {
        try fake.control("dark-sky", "{\"key\": \"\(key)\", \"remaining\": 0, \"reset\": 432000}")
        let before = Date().timeIntervalSince1970
        let exporter = try ExporterProcess(config: config(), environment: ["CLOUDY_API_KEY": key])
        try exporter.waitFor("/healthz")
        let refused = "cloudy_exporter_upstream_requests_total{provider=\"dark-sky\",code=\"429\"}"
        let metrics = try exporter.metrics { $0[refused] != nil }
        assertClose(metrics[refused], 1)
        assertClose(metrics["weather_up{location=\"New York\"}"], 0)
        let after = Date().timeIntervalSince1970
        let ready = String(decoding: try exporter.get("/readyz").body, as: UTF8.self)
        // The reset's five days and a minute's margin, from the moment of the refusal.
        let lifts = stride(from: before.rounded(.down), through: after.rounded(.up), by: 1).map {
            "no requests to dark-sky until \(QuietPeriod.utcTime($0 + 432_000 + QuietPeriod.resetMargin))"
        }
        XCTAssertTrue(lifts.contains { ready.contains($0) }, "\(lifts.first ?? "") …: \(ready)")
        XCTAssertTrue(ready.contains("API rate limit exceeded"), ready)
        // A later scrape: still one request, one log line. That nothing is asked at the next
        // refreshes either is shown on a clock the test advances (QuietPeriodTests, Dark Sky's).
        try exporter.waitFor("/metrics")
        XCTAssertEqual(exporter.log.components(separatedBy: "refuses requests for its quota").count, 2, exporter.log)
        XCTAssertEqual(try fake.requests().filter { ($0["path"] as? String)?.hasPrefix("/forecast/") == true }.count, 1)
        XCTAssertFalse(exporter.log.contains(key) || ready.contains(key))
    }

    func testConfigCheckStretchesFivePlacesOnTheFreePlan() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-ds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key").path
        try "\(key)\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("cloudy.yml").path
        let places = (0..<5).map { "  - {name: P\($0), latitude: \($0), longitude: \($0)}" }.joined(separator: "\n")
        try
            "provider:\n  name: dark-sky\n  api_key_file: \(keyFile)\nrefresh:\n  interval: 10m\nlocations:\n\(places)\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(
            check.stdout,
            """
            \(file): OK (5 places, provider dark-sky)
            5 places, dark-sky: 5 calls per refresh, 21,600 a month at 10m; the free quota allows 10,000 a month: \
            needs 21m36s or more (24m1s keeps a 10 % margin)
            refresh.over_quota: stretch: refreshes every 24m1s

            """)
        XCTAssertFalse(check.stdout.contains(key) || check.stderr.contains(key))
    }
}
