import Foundation
import XCTest

@testable import Cloudy

/// What a reload changes in the requests the real binary sends: the `User-Agent` of every feed.
final class ReloadEndToEndTests: FakeWeatherTestCase {
    func config(provider extra: String = "") -> String {
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

        try config(provider: "  user_agent: \"cloudy-test/2.0 ops@example.org\"")
            .write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        // Another provider setting: a refresh starts at once.
        _ = try exporter.metrics { ($0["cloudy_exporter_refresh_duration_seconds_count"] ?? 0) >= 2 }
        XCTAssertEqual(try userAgents(), [ProviderSettings().userAgentInUse, "cloudy-test/2.0 ops@example.org"])
    }
}
