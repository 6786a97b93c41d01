import Foundation
import XCTest

@testable import Cloudy

/// Two real exporters on one `--storage.path`: the second stops at start-up and says why; once
/// the first is gone, however it went (SIGKILL here), the path is free again.
final class StorageLockEndToEndTests: FakeWeatherTestCase {
    func testASecondExporterOnTheSameStoragePathStopsAndSaysWhy() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let config = """
            provider:
              url: \(fake.baseURL)
            locations:
              - name: Berlin
                latitude: 52.52
                longitude: 13.41
            """
        let first = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try first.waitFor("/healthz")
        let second = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        second.process.waitUntilExit()
        XCTAssertEqual(second.process.terminationStatus, 1, second.log)
        XCTAssertTrue(
            second.log.contains(
                "--storage.path \(storage.path) is in use by another cloudy_exporter (pid \(first.process.processIdentifier))"
            ),
            second.log)
        XCTAssertEqual(first.terminate(signal: SIGKILL).status, SIGKILL)
        let third = try ExporterProcess(config: config, extraArguments: ["--storage.path", storage.path])
        try third.waitFor("/healthz")
    }
}
