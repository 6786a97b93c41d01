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

    /// An exporter without capabilities (as the shipped deployments run it) whose storage path
    /// cannot be made serves on and says why in the system's words, for the path and for the
    /// lock: the error number was read after a URL was made, which had set it again.
    func testAStoragePathItCannotMakeIsSaidInTheSystemsWords() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: parent.appendingPathComponent("kept"), withIntermediateDirectories: true)
        XCTAssertEqual(chmod(parent.path, 0o555), 0)
        XCTAssertEqual(chmod(parent.appendingPathComponent("kept").path, 0o555), 0)
        defer {
            chmod(parent.path, 0o755)
            try? FileManager.default.removeItem(at: parent)
        }
        let config =
            "provider:\n  url: \(fake.baseURL)\nlocations:\n  - {name: Berlin, latitude: 52.52, longitude: 13.41}\n"
        for (storage, file) in [("data", "data"), ("kept", "kept/lock")] {
            let path = parent.appendingPathComponent(storage).path
            let exporter = try ExporterProcess(
                config: config, extraArguments: ["--storage.path", path], unprivileged: true)
            try exporter.waitFor("/healthz")
            let said = "\(parent.appendingPathComponent(file).path): Permission denied"
            try waitUntil("the lock's warning", timeout: 10, log: exporter.log) { exporter.log.contains(said) }
        }
    }
}
