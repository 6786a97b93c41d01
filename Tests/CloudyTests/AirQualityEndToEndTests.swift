import Foundation
import XCTest

@testable import Cloudy

/// The real `cloudy_exporter` with `air_quality:` against the fake Open-Meteo (forecast and
/// air-quality endpoints): the air-quality feed runs on the weather's schedule, its calls are
/// counted with the forecast's on one quota (the page, the plan and `quota.json` show the sum),
/// and a failing air-quality API sets `weather_air_quality_up` to 0 and leaves the weather alone.
final class AirQualityEndToEndTests: FakeWeatherTestCase {
    func config(airQuality: String = "air_quality:\n  url: FAKE") -> String {
        """
        provider:
          url: \(fake.baseURL)
          quota: {per_day: 10000000}
        refresh:
          interval: 1s
          timeout: 2s
        \(airQuality.replacingOccurrences(of: "FAKE", with: fake.baseURL))
        locations:
        \(Self.threeCities)
        """
    }

    /// Open-Meteo's weight of the requests the fake answered on `paths` (both endpoints by default).
    func documentedCalls(paths: Set<String> = ["/v1/forecast", "/v1/air-quality"]) throws -> Double {
        try fake.documentedOpenMeteoCalls(paths: paths)
    }

    /// The calls `<storage.path>/quota.json` holds for the last day.
    func callsKept(by exporter: ExporterProcess) throws -> Double {
        let file = exporter.directory.appendingPathComponent("data/quota.json")
        let state = try JSONDecoder().decode(QuotaState.self, from: Data(contentsOf: file))
        return state.ledger.spent(inLast: 86_400, at: Date().timeIntervalSince1970 + 1)
    }

    /// Whether a series (`name{labels}`) is of an air-quality family.
    static func isAirQuality(_ series: String) -> Bool {
        let name = series.prefix { $0 != "{" }
        return name.hasPrefix("weather_air_") || name.contains("air_quality") || name.contains("pollen")
    }

    func testAirQualityIsScheduledCountedWithTheForecastAndItsFailureLeavesTheWeather() throws {
        let exporter = try ExporterProcess(config: config())
        try exporter.waitFor("/readyz")
        let up = { (place: String) in "weather_air_quality_up{location=\"\(place)\"}" }
        var metrics = try exporter.metrics { page in
            ["Berlin", "London", "New York"].allSatisfy { page[up($0)] == 1 }
        }
        // The fixture's values (open-meteo-air-quality.json), through the real binary's units.
        assertClose(metrics["weather_air_quality_european_index{location=\"Berlin\"}"], 58)
        assertClose(metrics["weather_air_pm2_5_grams_per_cubic_meter{location=\"New York\"}"], 8.4e-6)
        assertClose(metrics["weather_pollen_grains_per_cubic_meter{location=\"Berlin\",plant=\"grass\"}"], 35.2)
        assertClose(metrics["weather_pollen_grains_per_cubic_meter{location=\"Berlin\",plant=\"birch\"}"], 0)
        XCTAssertNil(
            metrics["weather_pollen_grains_per_cubic_meter{location=\"New York\",plant=\"birch\"}"],
            "no pollen forecast outside Europe: no sample")

        // One quota: the page's calls, the formula over both endpoints' requests and quota.json agree.
        let calls = "cloudy_exporter_upstream_calls_total{provider=\"open-meteo\"}"
        var expected = 0.0
        var kept = 0.0
        metrics = try exporter.metrics { page in
            expected = (try? self.documentedCalls()) ?? -1
            kept = (try? self.callsKept(by: exporter)) ?? -1
            return abs((page[calls] ?? 0) - expected) < 1e-5 && abs(kept - expected) < 1e-5
        }
        let forecastOnly = try documentedCalls(paths: ["/v1/forecast"])
        XCTAssertGreaterThan(expected, forecastOnly + 3 * 1.6 - 1e-9, "at least one air-quality request counted")
        assertClose(metrics[calls], expected)
        assertClose(kept, expected, "quota.json keeps the sum")
        // Planned per refresh: 3 × 2.9 for the forecast + 3 × 1.6 for the air quality, 60 a minute.
        assertClose(
            metrics["cloudy_exporter_upstream_planned_calls{provider=\"open-meteo\",window=\"minute\"}"],
            60 * (8.7 + 4.8))

        // The air-quality endpoint fails: its up goes to 0; the weather keeps every series.
        let weatherBefore = metrics.filter { $0.key.hasPrefix("weather_") && !Self.isAirQuality($0.key) }
        try fake.control("fault", #"{"mode":"status","status":500,"path":"/v1/air-quality"}"#)
        metrics = try exporter.metrics { page in
            ["Berlin", "London", "New York"].allSatisfy { page[up($0)] == 0 }
        }
        let weatherAfter = metrics.filter { $0.key.hasPrefix("weather_") && !Self.isAirQuality($0.key) }
        XCTAssertEqual(Set(weatherAfter.keys), Set(weatherBefore.keys))
        for place in ["Berlin", "London", "New York"] {
            assertClose(metrics["weather_up{location=\"\(place)\"}"], 1)
            assertClose(
                metrics["weather_temperature_celsius{location=\"\(place)\"}"],
                try XCTUnwrap(weatherBefore["weather_temperature_celsius{location=\"\(place)\"}"]))
        }
        XCTAssertNotNil(
            metrics["weather_air_quality_european_index{location=\"Berlin\"}"],
            "the last good report stays until stale_after")
        XCTAssertEqual(try exporter.get("/readyz").status, 200)
    }

    func testAReloadTurnsAirQualityOnAndOff() throws {
        let exporter = try ExporterProcess(config: config(airQuality: ""))
        try exporter.waitFor("/readyz")
        let up = "weather_air_quality_up{location=\"Berlin\"}"
        XCTAssertNil(try exporter.metrics()[up])
        try config().write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        _ = try exporter.metrics { $0[up] == 1 }
        try config(airQuality: "").write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        let off = try exporter.metrics()
        XCTAssertTrue(off.keys.filter(Self.isAirQuality).isEmpty, "its series leave with the config")
        let asked = try fake.requests().filter { $0["path"] as? String == "/v1/air-quality" }.count
        XCTAssertGreaterThan(asked, 0, "on: asked")
        let refreshes = "cloudy_exporter_refresh_duration_seconds_count"
        let done = off[refreshes] ?? 0
        _ = try exporter.metrics { ($0[refreshes] ?? 0) >= done + 2 }
        XCTAssertLessThanOrEqual(
            try fake.requests().filter { $0["path"] as? String == "/v1/air-quality" }.count, asked + 1,
            "off: asked no more (one in flight at the reload at most)")
    }
}
