import Foundation
import XCTest

@testable import Cloudy

/// Issue 16's plan with the real `cloudy_exporter`: the calls counted on `/metrics` after a few
/// refreshes against the fake Open-Meteo equal the documented formula summed over the requests
/// the fake received; `--config.check` prints the plan; `refresh.over_quota: refuse` stops a
/// start and refuses a reload; `stretch` raises the interval in use on reload.
final class QuotaEndToEndTests: FakeWeatherTestCase {
    func config(interval: String = "1s", refresh: String = "", provider: String = "") -> String {
        """
        provider:
          url: \(fake.baseURL)
        \(provider)
        refresh:
          interval: \(interval)
          timeout: 2s
        \(refresh)
        locations:
        \(Self.threeCities)
        """
    }

    /// Open-Meteo's weight of every forecast request the fake answered, from its query alone:
    /// places × max(1, nVars/10 × max(1, nDays/14)).
    func documentedCallsOfTheRequestsSent() throws -> Double {
        try fake.documentedOpenMeteoCalls(paths: ["/v1/forecast"])
    }

    func testCallsOnThePageEqualTheFormulaSummedOverTheRequestsSent() throws {
        let exporter = try ExporterProcess(config: config())
        try exporter.waitFor("/readyz")
        _ = try exporter.metrics { ($0["cloudy_exporter_refresh_duration_seconds_count"] ?? 0) >= 3 }
        let calls = "cloudy_exporter_upstream_calls_total{provider=\"open-meteo\"}"
        var expected = 0.0
        let metrics = try exporter.metrics { page in
            expected = (try? documentedCallsOfTheRequestsSent()) ?? -1
            return abs((page[calls] ?? 0) - expected) < 1e-5
        }
        XCTAssertGreaterThanOrEqual(expected, 3 * 8.7 - 1e-9, "three refreshes of three places at 2.9 calls each")
        assertClose(metrics[calls], expected)
        // A self-hosted URL has no quota: the plan is shown (60 refreshes a minute), no quota series.
        assertClose(
            metrics["cloudy_exporter_upstream_planned_calls{provider=\"open-meteo\",window=\"minute\"}"], 60 * 8.7)
        XCTAssertNil(metrics["cloudy_exporter_upstream_quota_calls{provider=\"open-meteo\",window=\"day\"}"])
        assertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 1)
    }

    /// OpenWeatherMap's 2.5 endpoints: two calls per place, one per request the fake received.
    func testOpenWeatherMapCallsAreItsRequests() throws {
        let yaml = config().replacingOccurrences(of: "provider:\n", with: "provider:\n  name: openweathermap\n")
        let exporter = try ExporterProcess(config: yaml, environment: ["CLOUDY_API_KEY": "test-owm-key"])
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        let sent = try fake.requests().filter { ($0["path"] as? String)?.hasPrefix("/data/2.5/") ?? false }.count
        XCTAssertEqual(sent, 6, "current weather and forecast for three places")
        assertClose(metrics["cloudy_exporter_upstream_calls_total{provider=\"openweathermap\"}"], Double(sent))
        assertClose(
            metrics["cloudy_exporter_upstream_planned_calls{provider=\"openweathermap\",window=\"hour\"}"], 6 * 6)
    }

    /// A request that never reached the provider (connection refused) is not a call it counts.
    func testRequestsThatNeverReachedTheProviderAreNotCounted() throws {
        let closed = try ClosedPort()
        let exporter = try ExporterProcess(
            config: config().replacingOccurrences(of: fake.baseURL, with: "http://127.0.0.1:\(closed.port)"))
        try exporter.waitFor("/healthz")
        let metrics = try exporter.metrics {
            ($0["cloudy_exporter_upstream_requests_total{provider=\"open-meteo\",code=\"connect\"}"] ?? 0) >= 2
        }
        assertClose(
            metrics["cloudy_exporter_upstream_calls_total{provider=\"open-meteo\"}"], 0,
            "\(metrics.filter { $0.key.hasPrefix("cloudy_exporter_upstream_requests_total") })")
    }

    /// A config of 100 places after `head`, and the path of a file in a directory of its own,
    /// removed when the test ends.
    func hundredPlaces(after head: String) throws -> (yaml: String, file: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-plan-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let places = (0..<100).map { "  - name: P\($0)\n    latitude: \(Double($0) / 2)\n    longitude: \($0)" }
        let yaml = head + "refresh:\n  interval: 10m\nlocations:\n" + places.joined(separator: "\n") + "\n"
        return (yaml, directory.appendingPathComponent("cloudy.yml").path)
    }

    func testConfigCheckPrintsThePlan() throws {
        let (yaml, file) = try hundredPlaces(after: "")
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)

        var check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(
            check.stdout,
            """
            \(file): OK (100 places, provider open-meteo)
            100 places, open-meteo: 290 calls per refresh, 41,760 a day at 10m; the free quota allows 10,000 a day: \
            needs 42m22s or more (46m28s keeps a 10 % margin)
            refresh.over_quota: stretch: refreshes every 46m28s

            """)

        check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file, "--shard=0/4"])
        XCTAssertEqual(check.status, 0, check.stderr)
        let owned = (0..<100).filter { Shard(index: 0, count: 4).owns("P\($0)") }.count
        XCTAssertTrue(
            check.stdout.contains("\(owned) places, open-meteo: \(RefreshPlan.number(Double(owned) * 2.9)) calls"),
            check.stdout)
        XCTAssertTrue(
            check.stdout.contains("this shard's 1/4 share of the free quota allows 2,500 a day"), check.stdout)

        try yaml.replacingOccurrences(of: "interval: 10m", with: "interval: 10m\n  over_quota: warn")
            .write(toFile: file, atomically: true, encoding: .utf8)
        check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(
            check.stdout.hasSuffix("refresh.over_quota: warn: keeps 10m and exceeds the quota\n"), check.stdout)

        try yaml.replacingOccurrences(of: "interval: 10m", with: "interval: 10m\n  over_quota: refuse")
            .write(toFile: file, atomically: true, encoding: .utf8)
        check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 1)
        XCTAssertEqual(check.stdout, "")
        XCTAssertTrue(
            check.stderr.hasPrefix("\(file): refresh.interval: 100 places, open-meteo: 290 calls"), check.stderr)
        XCTAssertTrue(
            check.stderr.contains("needs 42m22s or more (46m28s keeps a 10 % margin) (refresh.over_quota: refuse"),
            check.stderr)
    }

    /// An air quality on a quota of its own (MET Norway's forecast beside Open-Meteo's free
    /// air-quality host) is fitted to that quota by `refresh.over_quota`, apart from the weather.
    func testConfigCheckFitsAnAirQualityQuotaOfItsOwn() throws {
        let (yaml, file) = try hundredPlaces(
            after: "provider:\n  name: met-norway\n  user_agent: cloudy-tests/1 ops@example.com\nair_quality: {}\n")
        let plan =
            "100 places, air quality on a quota of its own: 160 calls per refresh, 23,040 a day at 10m; the free "
            + "quota allows 10,000 a day: needs 23m14s or more (25m43s keeps a 10 % margin)\n"
        for (overQuota, status, last) in [
            ("stretch", 0, plan + "refresh.over_quota: stretch: the air quality refreshes every 25m43s\n"),
            ("warn", 0, plan + "refresh.over_quota: warn: the air quality keeps 10m and exceeds its quota\n"),
            ("refuse", 1, ""),
        ] {
            try yaml.replacingOccurrences(of: "interval: 10m", with: "interval: 10m\n  over_quota: \(overQuota)")
                .write(toFile: file, atomically: true, encoding: .utf8)
            let check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
            XCTAssertEqual(check.status, Int32(status), overQuota)
            XCTAssertTrue(check.stdout.hasSuffix(last), "\(overQuota): \(check.stdout)")
            XCTAssertTrue(check.stdout.contains("100 places, met-norway: ") || status == 1, check.stdout)
            XCTAssertEqual(
                check.stderr.contains("then asks nothing for about 14h50m"), overQuota == "warn", check.stderr)
            if status == 1 {
                XCTAssertTrue(check.stderr.hasPrefix("\(file): refresh.interval: \(plan.dropLast())"), check.stderr)
            }
        }
    }

    /// 3 places cost 8.7 calls; 100 a day leave 90 (90 %): ten refreshes a day.
    let smallQuota = "  quota: {per_day: 100}"

    func testRefuseStopsTheStartAndARefusedReloadKeepsTheOldConfig() throws {
        let refusing = config(interval: "1h", refresh: "  over_quota: refuse", provider: smallQuota)
        let failed = try ExporterProcess(config: refusing)
        failed.process.waitUntilExit()
        XCTAssertEqual(failed.process.terminationStatus, 1)
        XCTAssertTrue(failed.log.contains("refresh.interval: 3 places, open-meteo: 8.7 calls per refresh"), failed.log)
        XCTAssertFalse(failed.log.contains("listening"), "nothing started")

        let exporter = try ExporterProcess(config: config(interval: "1h"))
        try exporter.waitFor("/readyz")
        try refusing.write(to: exporter.configFile, atomically: true, encoding: .utf8)
        let refused = try exporter.post("/-/reload")
        XCTAssertEqual(refused.status, 500)
        XCTAssertTrue(String(decoding: refused.body, as: UTF8.self).contains("needs 2h10m55s or more"))
        var metrics = try exporter.metrics()
        assertClose(metrics["cloudy_exporter_config_last_reload_successful"], 0)
        assertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 3600, "the old config keeps running")

        // The same quota with the default, stretch: 90 calls a day hold 10 refreshes, every 86,400 / 10 s.
        try config(interval: "1h", provider: smallQuota).write(
            to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        metrics = try exporter.metrics()
        assertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 8_640)
        assertClose(metrics["cloudy_exporter_upstream_quota_calls{provider=\"open-meteo\",window=\"day\"}"], 100)
        assertClose(metrics["cloudy_exporter_upstream_planned_calls{provider=\"open-meteo\",window=\"day\"}"], 8.7 * 10)
        XCTAssertTrue(exporter.log.contains("refresh.interval raised to fit the provider's quota"), exporter.log)

        // Stretched at start too, and said so in the log.
        let stretched = try ExporterProcess(config: config(interval: "1h", provider: smallQuota))
        try stretched.waitFor("/healthz")
        assertClose(try stretched.metrics()["cloudy_exporter_refresh_interval_seconds"], 8_640)
        XCTAssertTrue(stretched.log.contains("refresh.interval raised to fit the provider's quota"), stretched.log)
    }
}

extension FakeWeatherAPI {
    /// Open-Meteo's weight of every request the fake answered on `paths` (the forecast and the
    /// air-quality API count alike), from its query alone: places × max(1, nVars/10 × max(1, nDays/14)).
    func documentedOpenMeteoCalls(paths: Set<String>) throws -> Double {
        try requests().filter { paths.contains($0["path"] as? String ?? "") }.reduce(0) { sum, request in
            let query = request["query"] as? [String: String] ?? [:]
            let places = Double(query["latitude"]?.split(separator: ",").count ?? 0)
            let variables = ["current", "hourly", "daily"].reduce(0) {
                $0 + (query[$1]?.split(separator: ",").count ?? 0)
            }
            let days = Double(query["forecast_days"] ?? "7") ?? 7
            return sum + places * max(1, Double(variables) / 10 * max(1, days / 14))
        }
    }
}
