import Foundation
import XCTest
@testable import Cloudy

/// OpenWeatherMap, MET Norway and `city:` places: the real binary against the fake APIs.
/// The same families come out in the same units whichever provider serves a place.
final class ProvidersEndToEndTests: XCTestCase {
    var fake: FakeWeatherAPI!

    override func setUpWithError() throws {
        fake = try FakeWeatherAPI()
    }

    override func tearDown() {
        fake.stop()
    }

    func places(_ names: [(String, Double, Double)]) -> String {
        names.map { "  - name: \($0.0)\n    latitude: \($0.1)\n    longitude: \($0.2)\n" }.joined()
    }

    func waitForUp(_ exporter: ExporterProcess, _ place: String, _ value: Double = 1) throws -> [String: Double] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let metrics = try exporter.metrics()
            if metrics["weather_up{location=\"\(place)\"}"] == value { return metrics }
            guard Date() < deadline else { throw Failure("weather_up of \(place) never \(value); log:\n\(exporter.log.suffix(2000))") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func requests(_ path: String) throws -> [[String: Any]] {
        try fake.requests().filter { ($0["path"] as? String) == path }
    }

    func testOpenWeatherMapFamiliesCallBudgetAndSecretKey() throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("owm-key-\(UUID().uuidString)")
        try "test-owm-key\n".write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let exporter = try ExporterProcess(config: """
            provider:
              name: openweathermap
              url: \(fake.baseURL)
              api_key_file: \(keyFile.path)
            refresh:
              interval: 1s
            units:
              temperature: [celsius, fahrenheit]
              wind_speed: kilometers_per_hour
            locations:
            \(places([("Berlin", 52.52, 13.41), ("Paris", 48.8566, 2.3522)]))
            """)
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        let berlin = "location=\"Berlin\""
        XCTAssertClose(metrics["weather_temperature_celsius{\(berlin)}"], 24.52)
        XCTAssertClose(metrics["weather_temperature_fahrenheit{\(berlin)}"], 24.52 * 9 / 5 + 32)
        XCTAssertClose(metrics["weather_apparent_temperature_celsius{\(berlin)}"], 24.17)
        XCTAssertClose(metrics["weather_wind_speed_kilometers_per_hour{\(berlin)}"], 3.6 * 3.6)
        XCTAssertClose(metrics["weather_wind_gust_speed_kilometers_per_hour{\(berlin)}"], 7.2 * 3.6)
        XCTAssertClose(metrics["weather_pressure_msl_pascals{\(berlin)}"], 101500)
        XCTAssertClose(metrics["weather_relative_humidity_ratio{\(berlin)}"], 0.41)
        XCTAssertClose(metrics["weather_condition_code{\(berlin)}"], 3)
        XCTAssertClose(metrics["weather_forecast_daily_temperature_max_celsius{\(berlin),day=\"0\"}"], 24.72)
        XCTAssertClose(metrics["weather_forecast_hourly_temperature_celsius{\(berlin),hour=\"3\"}"], 24.1)
        XCTAssertNil(metrics["weather_dew_point_celsius{\(berlin)}"], "OpenWeatherMap gives no dew point: absent, not 0")
        XCTAssertNotNil(metrics["weather_location_info{\(berlin),latitude=\"52.52\",longitude=\"13.41\",timezone=\"\",provider=\"openweathermap\"}"])
        XCTAssertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 600, "clamped to the call budget")
        XCTAssertTrue(exporter.log.contains("refresh.interval raised"), exporter.log)

        Thread.sleep(forTimeInterval: 2.5)
        XCTAssertEqual(try requests("/data/2.5/weather").count, 2, "one current-weather call per place")
        XCTAssertEqual(try requests("/data/2.5/forecast").count, 2, "one forecast call per place")
        var everything = exporter.log
        for path in ["/metrics", "/", "/readyz"] { everything += String(decoding: try exporter.get(path).body, as: UTF8.self) }
        XCTAssertFalse(everything.contains("test-owm-key"), "the key appears nowhere")
    }

    func testOpenWeatherMapBadKeyIsReportedWithoutTheKey() throws {
        let exporter = try ExporterProcess(config: """
            provider:
              name: openweathermap
              url: \(fake.baseURL)
            locations:
            \(places([("Berlin", 52.52, 13.41)]))
            """, environment: ["CLOUDY_API_KEY": "WRONG-KEY-4242"])
        try exporter.waitFor("/healthz")
        let metrics = try waitForUp(exporter, "Berlin", 0)
        XCTAssertClose(metrics["cloudy_exporter_upstream_requests_total{provider=\"openweathermap\",code=\"401\"}"], 1)
        let ready = try exporter.get("/readyz")
        XCTAssertEqual(ready.status, 503)
        XCTAssertTrue(String(decoding: ready.body, as: UTF8.self).contains("invalid API key"))
        XCTAssertTrue(exporter.log.contains("invalid API key"))
        XCTAssertFalse(exporter.log.contains("WRONG-KEY-4242"))
        let query = try XCTUnwrap(try requests("/data/2.5/weather").first?["query"] as? [String: String])
        XCTAssertEqual(query["appid"], "WRONG-KEY-4242", "the key from CLOUDY_API_KEY was sent")
    }

    func testOpenWeatherMapOneCallWhenTheConfigAsks() throws {
        let exporter = try ExporterProcess(config: """
            provider:
              name: openweathermap
              url: \(fake.baseURL)
              one_call: true
            locations:
            \(places([("Berlin", 52.52, 13.41)]))
            """, environment: ["CLOUDY_API_KEY": "test-owm-key"])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        XCTAssertClose(metrics["weather_dew_point_celsius{location=\"Berlin\"}"], 10.4, "One Call has the dew point 2.5 lacks")
        XCTAssertClose(metrics["weather_forecast_daily_uv_index_max{location=\"Berlin\",day=\"0\"}"], 6.15)
        XCTAssertEqual(try requests("/data/3.0/onecall").count, 1, "one request per place")
        XCTAssertEqual(try requests("/data/2.5/weather").count, 0)
    }

    func metConfig(interval: String = "1s", extra: String = "") -> String {
        """
        provider:
          name: met-norway
          url: \(fake.baseURL)
          user_agent: "cloudy-tests/1.0 ops@example.org"
        refresh:
          interval: \(interval)
        locations:
        \(places([("Berlin", 52.52, 13.41)]))\(extra)
        """
    }

    func testMETNorwayHonoursExpiresAndIfModifiedSince() throws {
        let exporter = try ExporterProcess(config: metConfig() + "    timezone: Europe/Berlin\n")
        try exporter.waitFor("/readyz")
        var metrics = try exporter.metrics()
        let berlin = "location=\"Berlin\""
        XCTAssertClose(metrics["weather_temperature_celsius{\(berlin)}"], 24.8)
        XCTAssertClose(metrics["weather_pressure_msl_pascals{\(berlin)}"], 101460)
        XCTAssertClose(metrics["weather_wind_speed_meters_per_second{\(berlin)}"], 3.4)
        XCTAssertNil(metrics["weather_wind_gust_speed_meters_per_second{\(berlin)}"], "compact has no gusts")
        XCTAssertNotNil(metrics["weather_forecast_daily_temperature_max_celsius{\(berlin),day=\"0\"}"])
        XCTAssertNotNil(metrics["weather_location_info{\(berlin),latitude=\"52.52\",longitude=\"13.41\",timezone=\"Europe/Berlin\",provider=\"met-norway\"}"])
        let first = try requests("/weatherapi/locationforecast/2.0/compact")
        XCTAssertEqual(first.count, 1)
        XCTAssertEqual((first[0]["headers"] as? [String: String])?["user-agent"], "cloudy-tests/1.0 ops@example.org")

        Thread.sleep(forTimeInterval: 2.5)
        XCTAssertEqual(try requests("/weatherapi/locationforecast/2.0/compact").count, 1, "no request before Expires")

        // Expiring answers: the next request asks If-Modified-Since and gets a 304.
        try fake.control("met", "{\"expires_in\": 1}")
        exporter.process.interrupt()
        exporter.process.waitUntilExit()
        let second = try ExporterProcess(config: metConfig() + "    timezone: Europe/Berlin\n")
        try second.waitFor("/readyz")
        let deadline = Date().addingTimeInterval(10)
        while try requests("/weatherapi/locationforecast/2.0/compact").count < 3, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let all = try requests("/weatherapi/locationforecast/2.0/compact")
        XCTAssertGreaterThanOrEqual(all.count, 3)
        XCTAssertEqual((all.last?["headers"] as? [String: String])?["if-modified-since"], "Mon, 15 Jun 2026 12:18:55 GMT")
        metrics = try waitForUp(second, "Berlin")
        XCTAssertGreaterThanOrEqual(metrics["cloudy_exporter_upstream_requests_total{provider=\"met-norway\",code=\"304\"}"] ?? 0, 1)
        XCTAssertClose(metrics["weather_temperature_celsius{\(berlin)}"], 24.8, "a 304 keeps the data")
    }

    func testMETNorwayDeprecationIsLoggedOnce() throws {
        try fake.control("met", "{\"status\": 203, \"expires_in\": 0}")
        let exporter = try ExporterProcess(config: metConfig())
        try exporter.waitFor("/readyz")
        Thread.sleep(forTimeInterval: 2.5)
        XCTAssertGreaterThanOrEqual(try requests("/weatherapi/locationforecast/2.0/compact").count, 2)
        XCTAssertEqual(exporter.log.components(separatedBy: "answers 203").count - 1, 1, exporter.log)
        XCTAssertTrue(exporter.log.contains("solar offset"), "no timezone: the longitude's offset, logged")
    }

    func cityConfig(storage: URL, city: String) -> String {
        """
        provider:
          url: \(fake.baseURL)
        geocoding:
          url: \(fake.baseURL)
        refresh:
          interval: 1h
        locations:
          - name: Springfield
            city: "\(city)"
            country: US
          - name: Berlin
            latitude: 52.52
            longitude: 13.41
        """
    }

    func testCityPlacesResolvePersistAndSurviveAGeocoderOutage() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let config = cityConfig(storage: storage, city: "Springfield, Illinois")
        let exporter = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        XCTAssertNotNil(metrics["weather_location_info{location=\"Springfield\",latitude=\"39.80172\",longitude=\"-89.64371\",timezone=\"America/Chicago\",provider=\"open-meteo\"}"],
                        metrics.keys.filter { $0.hasPrefix("weather_location_info") }.description)
        XCTAssertClose(metrics["weather_up{location=\"Springfield\"}"], 1)
        XCTAssertTrue(exporter.log.contains("city resolved"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.appendingPathComponent("places.json").path))
        XCTAssertEqual(try requests("/v1/search").count, 1)
        exporter.process.interrupt()
        exporter.process.waitUntilExit()

        // The geocoder is down now; the remembered coordinates carry the restart.
        try fake.control("fault", "{\"mode\": \"status\", \"status\": 503, \"path\": \"/v1/search\"}")
        let restarted = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try restarted.waitFor("/readyz")
        XCTAssertClose(try restarted.metrics()["weather_up{location=\"Springfield\"}"], 1)
        XCTAssertEqual(try requests("/v1/search").count, 1, "no look-up after the restart")
    }

    func testAnUnknownCityWaitsWithAClearErrorWhileOthersRun() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let exporter = try ExporterProcess(config: cityConfig(storage: storage, city: "Atlantis"), extraArguments: ["--storage.path", storage.path])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        XCTAssertClose(metrics["weather_up{location=\"Berlin\"}"], 1)
        XCTAssertClose(metrics["weather_up{location=\"Springfield\"}"], 0)
        XCTAssertFalse(metrics.keys.contains { $0.hasPrefix("weather_location_info{location=\"Springfield\"") }, "no coordinates to tell yet")
        let page = String(decoding: try exporter.get("/").body, as: UTF8.self)
        XCTAssertTrue(page.contains("geocoding Atlantis (US): no place matches"), page)
        let ready = String(decoding: try exporter.get("/readyz").body, as: UTF8.self)
        XCTAssertEqual(ready, "ready\nfailing: Springfield: geocoding Atlantis (US): no place matches\n")
        XCTAssertTrue(exporter.log.contains("city look-up failed"))
    }
}
