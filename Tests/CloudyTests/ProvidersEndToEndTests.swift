import Foundation
import XCTest

@testable import Cloudy

/// OpenWeatherMap (2.5 and One Call), MET Norway and `city:` places: the real binary against
/// the fake APIs, each once. The same families come out in the same units whichever provider
/// serves a place. What depends on time (OpenWeatherMap's call spacing, MET's `Expires` and
/// 304s, the deprecation warning logged once, the geocoder's retries) is tested in process
/// with a `ManualClock`: OpenWeatherMapCallSpacingTests, METNorwayCacheTests, GeocoderTests.
final class ProvidersEndToEndTests: FakeWeatherTestCase {

    func places(_ names: [(String, Double, Double)]) -> String {
        names.map { "  - name: \($0.0)\n    latitude: \($0.1)\n    longitude: \($0.2)\n" }.joined()
    }

    /// `/metrics` once `weather_up` of `place` is `value` (polled, at most 10 s).
    func waitForUp(_ exporter: ExporterProcess, _ place: String, _ value: Double = 1) throws -> [String: Double] {
        try exporter.metrics { $0["weather_up{location=\"\(place)\"}"] == value }
    }

    /// The requests the fake answered on `path`.
    func requests(_ path: String) throws -> [[String: Any]] {
        try fake.requests().filter { ($0["path"] as? String) == path }
    }

    func testOpenWeatherMapFamiliesCallBudgetAndSecretKey() throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("owm-key-\(UUID().uuidString)")
        try "test-owm-key\n".write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let exporter = try ExporterProcess(
            config: """
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
        assertClose(metrics["weather_temperature_celsius{\(berlin)}"], 24.52)
        assertClose(metrics["weather_temperature_fahrenheit{\(berlin)}"], 24.52 * 9 / 5 + 32)
        assertClose(metrics["weather_apparent_temperature_celsius{\(berlin)}"], 24.17)
        assertClose(metrics["weather_wind_speed_kilometers_per_hour{\(berlin)}"], 3.6 * 3.6)
        assertClose(metrics["weather_wind_gust_speed_kilometers_per_hour{\(berlin)}"], 7.2 * 3.6)
        assertClose(metrics["weather_pressure_msl_pascals{\(berlin)}"], 101500)
        assertClose(metrics["weather_relative_humidity_ratio{\(berlin)}"], 0.41)
        assertClose(metrics["weather_condition_code{\(berlin)}"], 2)  // 803 broken clouds
        assertClose(metrics["weather_forecast_daily_temperature_max_celsius{\(berlin),day=\"0\"}"], 24.72)
        assertClose(metrics["weather_forecast_hourly_temperature_celsius{\(berlin),hour=\"3\"}"], 24.1)
        XCTAssertNil(
            metrics["weather_dew_point_celsius{\(berlin)}"], "OpenWeatherMap gives no dew point: absent, not 0")
        XCTAssertNotNil(
            metrics[
                "weather_location_info{\(berlin),latitude=\"52.52\",longitude=\"13.41\",timezone=\"\",provider=\"openweathermap\"}"
            ])
        assertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 600, "clamped to the call budget")
        XCTAssertTrue(exporter.log.contains("refresh.interval raised"), exporter.log)

        XCTAssertEqual(try requests("/data/2.5/weather").count, 2, "one current-weather call per place")
        XCTAssertEqual(try requests("/data/2.5/forecast").count, 2, "one forecast call per place")
        var everything = exporter.log
        for path in ["/metrics", "/", "/readyz"] {
            everything += String(decoding: try exporter.get(path).body, as: UTF8.self)
        }
        XCTAssertFalse(everything.contains("test-owm-key"), "the key appears nowhere")
    }

    /// OpenWeatherMap at the fake for Berlin, the key from the environment; `extra` adds provider keys.
    func openWeatherMapBerlin(extra: String = "") -> String {
        """
        provider:
          name: openweathermap
          url: \(fake.baseURL)
        \(extra)locations:
        \(places([("Berlin", 52.52, 13.41)]))
        """
    }

    func testOpenWeatherMapBadKeyIsReportedWithoutTheKey() throws {
        let exporter = try ExporterProcess(
            config: openWeatherMapBerlin(), environment: ["CLOUDY_API_KEY": "WRONG-KEY-4242"])
        try exporter.waitFor("/healthz")
        // Down once the 401 is counted: before the first answer the place is down too (waiting),
        // and a slow start (ThreadSanitizer, a busy machine) is scraped then.
        let refusals = "cloudy_exporter_upstream_requests_total{provider=\"openweathermap\",code=\"401\"}"
        let metrics = try exporter.metrics { $0["weather_up{location=\"Berlin\"}"] == 0 && $0[refusals] != nil }
        assertClose(metrics[refusals], 1)
        let ready = try exporter.get("/readyz")
        XCTAssertEqual(ready.status, 503)
        XCTAssertTrue(String(decoding: ready.body, as: UTF8.self).contains("invalid API key"))
        XCTAssertTrue(exporter.log.contains("invalid API key"))
        XCTAssertFalse(exporter.log.contains("WRONG-KEY-4242"))
        let query = try XCTUnwrap(try requests("/data/2.5/weather").first?["query"] as? [String: String])
        XCTAssertEqual(query["appid"], "WRONG-KEY-4242", "the key from CLOUDY_API_KEY was sent")
    }

    func testOpenWeatherMapOneCallWhenTheConfigAsks() throws {
        let exporter = try ExporterProcess(
            config: openWeatherMapBerlin(extra: "  one_call: true\n"), environment: ["CLOUDY_API_KEY": "test-owm-key"])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        assertClose(
            metrics["weather_dew_point_celsius{location=\"Berlin\"}"], 10.4, "One Call has the dew point 2.5 lacks")
        assertClose(metrics["weather_forecast_daily_uv_index_max{location=\"Berlin\",day=\"0\"}"], 6.15)
        XCTAssertEqual(try requests("/data/3.0/onecall").count, 1, "one request per place")
        XCTAssertEqual(try requests("/data/2.5/weather").count, 0)
    }

    func testMETNorwayFamiliesUserAgentAndDeprecationWarning() throws {
        try fake.control("met", "{\"status\": 203}")
        let exporter = try ExporterProcess(
            config: """
                provider:
                  name: met-norway
                  url: \(fake.baseURL)
                  user_agent: "cloudy-tests/1.0 ops@example.org"
                refresh:
                  interval: 1s
                locations:
                \(places([("Berlin", 52.52, 13.41)]))    timezone: Europe/Berlin
                """)
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        let berlin = "location=\"Berlin\""
        assertClose(metrics["weather_temperature_celsius{\(berlin)}"], 24.8)
        assertClose(metrics["weather_pressure_msl_pascals{\(berlin)}"], 101460)
        assertClose(metrics["weather_wind_speed_meters_per_second{\(berlin)}"], 3.4)
        XCTAssertNil(metrics["weather_wind_gust_speed_meters_per_second{\(berlin)}"], "compact has no gusts")
        // Today in Berlin: the fake's generated steps 12:00–21:00Z, the highest 24.9 at 14:00Z.
        assertClose(metrics["weather_forecast_daily_temperature_max_celsius{\(berlin),day=\"0\"}"], 24.9)
        let info =
            "weather_location_info{\(berlin),latitude=\"52.52\",longitude=\"13.41\",timezone=\"Europe/Berlin\","
            + "provider=\"met-norway\"}"
        XCTAssertNotNil(metrics[info])
        let asked = try requests("/weatherapi/locationforecast/2.0/compact")
        XCTAssertEqual(asked.count, 1, "no second request before Expires (30 minutes ahead)")
        XCTAssertEqual((asked[0]["headers"] as? [String: String])?["user-agent"], "cloudy-tests/1.0 ops@example.org")
        XCTAssertTrue(exporter.log.contains("met-norway answers 203"), exporter.log)
    }

    func testCityPlacesResolvePersistSurviveAGeocoderOutageAndAnUnknownOneWaits() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let config = """
            provider:
              url: \(fake.baseURL)
            geocoding:
              url: \(fake.baseURL)
            refresh:
              interval: 1h
            locations:
              - name: Springfield
                city: "Springfield, Illinois"
                country: US
              - name: Atlantis
                city: "Atlantis"
                country: US
              - name: Berlin
                latitude: 52.52
                longitude: 13.41
            """
        let exporter = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        let springfield =
            "weather_location_info{location=\"Springfield\",latitude=\"39.80172\",longitude=\"-89.64371\","
            + "timezone=\"America/Chicago\",provider=\"open-meteo\"}"
        XCTAssertNotNil(metrics[springfield], metrics.keys.filter { $0.hasPrefix("weather_location_info") }.description)
        assertClose(metrics["weather_up{location=\"Springfield\"}"], 1)
        assertClose(metrics["weather_up{location=\"Berlin\"}"], 1)
        assertClose(metrics["weather_up{location=\"Atlantis\"}"], 0)
        XCTAssertFalse(
            metrics.keys.contains { $0.hasPrefix("weather_location_info{location=\"Atlantis\"") },
            "no coordinates to tell yet")
        let page = String(decoding: try exporter.get("/").body, as: UTF8.self)
        XCTAssertTrue(page.contains("geocoding Atlantis (US): no place matches"), page)
        let ready = String(decoding: try exporter.get("/readyz").body, as: UTF8.self)
        XCTAssertEqual(ready, "ready\nfailing: Atlantis: geocoding Atlantis (US): no place matches\n")
        XCTAssertTrue(exporter.log.contains("city resolved"))
        XCTAssertTrue(exporter.log.contains("city look-up failed"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.appendingPathComponent("places.json").path))
        XCTAssertEqual(try springfieldLookUps(), 1)
        exporter.process.interrupt()
        exporter.process.waitUntilExit()

        // The geocoder is down now; the remembered coordinates carry the restart.
        try fake.control("fault", "{\"mode\": \"status\", \"status\": 503, \"path\": \"/v1/search\"}")
        let restarted = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try restarted.waitFor("/readyz")
        assertClose(try restarted.metrics()["weather_up{location=\"Springfield\"}"], 1)
        XCTAssertEqual(try springfieldLookUps(), 1, "no look-up of Springfield after the restart")
    }

    func springfieldLookUps() throws -> Int {
        try requests("/v1/search").filter { request in
            ((request["query"] as? [String: String])?["name"] ?? "").hasPrefix("Springfield")
        }.count
    }
}
