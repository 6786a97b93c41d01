import Foundation
import XCTest

@testable import Cloudy

/// What a reload changes in the requests the real binary sends (the `User-Agent` of every
/// feed) and what it keeps: `--shard` from the command line.
final class ReloadEndToEndTests: FakeWeatherTestCase {
    func config(provider extra: String = "", places more: String = "") -> String {
        """
        provider:
          url: \(fake.baseURL)
        \(extra)
        refresh:
          interval: 1h
          timeout: 2s
        locations:
          - name: Berlin
            latitude: 52.52
            longitude: 13.41
        \(more)
        """
    }

    func userAgents() throws -> [String] {
        try fake.requests().compactMap { ($0["headers"] as? [String: String])?["user-agent"] }
    }

    func testAReloadedUserAgentIsSentFromTheNextRequestOn() throws {
        let exporter = try ExporterProcess(config: config())
        try exporter.waitFor("/readyz")
        XCTAssertEqual(try userAgents(), [ProviderSettings().userAgentInUse])
        XCTAssertTrue(ProviderSettings().userAgentInUse.hasPrefix("cloudy_exporter/\(BuildInfo.version) "))

        // The User-Agent alone asks nothing again; the place added with it is asked at once.
        try config(
            provider: "  user_agent: \"cloudy-test/2.0 ops@example.org\"",
            places: "  - {name: Oslo, latitude: 59.91, longitude: 10.75}"
        ).write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        _ = try exporter.metrics { $0["weather_up{location=\"Oslo\"}"] == 1 }
        XCTAssertEqual(try userAgents(), [ProviderSettings().userAgentInUse, "cloudy-test/2.0 ops@example.org"])
        XCTAssertEqual(try fake.requests().compactMap { $0["path"] as? String }.count, 2, "Berlin not asked again")
    }

    /// A reload of `refresh.timeout` and `refresh.parallel_requests` changes how every feed asks,
    /// not what: MET Norway's forecast and warnings before their `Expires`, and the air quality,
    /// are not asked again for Oslo; Bergen, added with it, is asked at once.
    func testAReloadOfTheTimeoutAsksNoPlaceAgain() throws {
        func config(timeout: String, places: [(String, Double, Double)]) -> String {
            """
            provider:
              name: met-norway
              url: \(fake.baseURL)
              user_agent: "cloudy-tests/1.0 ops@example.org"
            refresh:
              interval: 1h
              timeout: \(timeout)
              parallel_requests: 2
            air_quality:
              url: \(fake.baseURL)
            warnings:
              sources:
                - { name: met-norway, url: "\(fake.baseURL)" }
            locations:
            \(places.map { "  - {name: \($0.0), latitude: \($0.1), longitude: \($0.2)}" }.joined(separator: "\n"))
            """
        }
        func everyFeed(_ place: String) -> ([String: Double]) -> Bool {
            { metrics in
                [
                    "weather_up{location=\"\(place)\"}", "weather_air_quality_up{location=\"\(place)\"}",
                    "weather_warnings_up{location=\"\(place)\",source=\"met-norway\"}",
                ].allSatisfy { metrics[$0] == 1 }
            }
        }
        let oslo = ("Oslo", 59.91, 10.75)
        let exporter = try ExporterProcess(config: config(timeout: "2s", places: [oslo]))
        _ = try exporter.metrics(when: everyFeed("Oslo"))
        XCTAssertEqual(try fake.requests().count, 3, "the forecast, the air quality and the warnings")

        _ = try fake.control("reset")
        try config(timeout: "3s", places: [oslo, ("Bergen", 60.39, 5.32)])
            .write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        _ = try exporter.metrics(when: everyFeed("Bergen"))
        let asked = try fake.requests().map { ($0["path"] as? String ?? "", $0["query"] as? [String: String] ?? [:]) }
        XCTAssertEqual(asked.count, 3, "\(asked)")
        for (path, query) in asked {
            XCTAssertTrue(query.values.contains { $0.contains("60.39") }, "\(path): \(query)")
            XCTAssertFalse(query.values.contains { $0.contains("59.91") }, "Oslo asked again: \(path): \(query)")
        }
    }

    /// A sharded replica reloaded (POST, then SIGHUP) with more places still exports only the
    /// places its `--shard` owns: the flag is not lost with the file read again.
    func testAReloadKeepsTheShardFromTheCommandLine() throws {
        func places(_ count: Int) -> String {
            let entries = (0..<count).map { "  - {name: City \($0), latitude: \($0), longitude: \($0)}" }
            return "provider:\n  url: \(fake.baseURL)\nrefresh:\n  interval: 1h\nlocations:\n"
                + entries.joined(separator: "\n") + "\n"
        }
        func exported(_ metrics: [String: Double]) -> Set<String> {
            Set(
                metrics.keys.compactMap { key in
                    key.hasPrefix("weather_up{location=\"") ? String(key.dropFirst(21).dropLast(2)) : nil
                })
        }
        let shard = Shard(index: 1, count: 3)
        let owned = { (count: Int) in Set((0..<count).map { "City \($0)" }.filter(shard.owns)) }
        XCTAssertFalse(owned(6).isEmpty)
        let exporter = try ExporterProcess(config: places(6), extraArguments: ["--shard=1/3"])
        XCTAssertEqual(exported(try exporter.metrics { exported($0).count == owned(6).count }), owned(6))

        try places(12).write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        let reloaded = try exporter.metrics { exported($0).count >= owned(12).count && exported($0) != owned(6) }
        XCTAssertEqual(exported(reloaded), owned(12))

        try places(18).write(to: exporter.configFile, atomically: true, encoding: .utf8)
        kill(exporter.process.processIdentifier, SIGHUP)
        let hungUp = try exporter.metrics { exported($0).count >= owned(18).count && exported($0) != owned(12) }
        XCTAssertEqual(exported(hungUp), owned(18))
    }
}
