import Foundation
import XCTest

@testable import Cloudy

/// Paths the tests share: fixtures inside the test target, the package root, the built binary.
enum TestPaths {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let fixtures = testsDirectory.appendingPathComponent("Fixtures")
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func fixtureBytes(_ name: String) throws -> [UInt8] {
        Array(try fixture(name))
    }

    /// The `cloudy_exporter` built next to the test bundle (scripts/test builds it first): in the
    /// same scratch path, so the ThreadSanitizer suite (.build/tsan) starts its TSan binary.
    static var exporterBinary: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("cloudy_exporter"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("cloudy_exporter"),
            packageRoot.appendingPathComponent(".build/debug/cloudy_exporter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]
    }
}

/// What every exporter a test starts gets in its environment: SwiftNIO's strict mode, in which a
/// task for an event loop that has shut down crashes the process instead of printing "Cannot
/// schedule tasks" (NIO says it will crash one day anyway), so no test passes with it.
/// scripts/test sets it for the suite's own process too.
let strictNIO = ["SWIFTNIO_STRICT": "true"]

/// Runs a program to completion and returns its exit status and output.
@discardableResult
func runProgram(_ path: String, _ arguments: [String], input: Data? = nil) throws -> (
    status: Int32, stdout: String, stderr: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(strictNIO) { $1 }
    let out = Pipe()
    let err = Pipe()
    let inp = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inp
    try process.run()
    if let input { inp.fileHandleForWriting.write(input) }
    try inp.fileHandleForWriting.close()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// promtool from Debian's `prometheus` package; scripts/test installs it. A missing promtool
/// fails the test rather than skipping it, so CI can never pass without the check.
func promtoolPath() throws -> String {
    for path in ["/usr/bin/promtool", "/usr/local/bin/promtool"]
    where FileManager.default.isExecutableFile(atPath: path) {
        return path
    }
    XCTFail("promtool not found: install Debian's prometheus package (scripts/test does)")
    throw XCTSkip("promtool missing")
}

/// Compares `actual` byte for byte with `Fixtures/golden/<name>`, failing with the first line
/// that differs. With `CLOUDY_UPDATE_GOLDEN=1` a file that differs is rewritten and the test
/// still fails, saying so: update mode never passes on a file it has just written, so a shell
/// that kept the variable set cannot turn the suite green. Run again without it after reading
/// the diff.
func assertMatchesGolden(
    _ actual: [UInt8], golden name: String, file: StaticString = #filePath, line: UInt = #line
) throws {
    let directory = TestPaths.fixtures.appendingPathComponent("golden")
    let url = directory.appendingPathComponent(name)
    let golden = (try? Data(contentsOf: url)).map(Array.init)
    guard actual != golden else { return }
    if ProcessInfo.processInfo.environment["CLOUDY_UPDATE_GOLDEN"] == "1" {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(actual).write(to: url)
        return XCTFail(
            "rewrote golden/\(name): read the diff, then run again without CLOUDY_UPDATE_GOLDEN", file: file, line: line
        )
    }
    guard let golden else {
        return XCTFail("golden/\(name) is missing: make it with CLOUDY_UPDATE_GOLDEN=1", file: file, line: line)
    }
    let goldenLines = String(decoding: golden, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    let actualLines = String(decoding: actual, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    let first =
        zip(goldenLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(goldenLines.count, actualLines.count)
    func text(_ lines: [Substring]) -> Substring { first < lines.count ? lines[first] : "<end>" }
    XCTFail(
        "golden/\(name) differs at line \(first + 1):\n golden: \(text(goldenLines))\n actual: \(text(actualLines))\n"
            + "(regenerate with CLOUDY_UPDATE_GOLDEN=1 if the change is deliberate)", file: file, line: line)
}

extension ExporterTelemetry {
    /// `cloudy_exporter_upstream_requests_total{provider, code}` as the exporter's page shows it.
    func requestsOnThePage(_ provider: String, code: String) -> Double? {
        var page = MetricFamilies()
        read().addSamples(to: &page, refreshInterval: 600, shard: .all)
        let text = String(buffer: RenderedMetrics(page: page, processMetrics: { MetricFamilies() }).prometheus)
        return Exposition.parse(text)[
            "cloudy_exporter_upstream_requests_total{provider=\"\(provider)\",code=\"\(code)\"}"]
    }
}

extension QuotaAccount {
    /// A batch of `places` reserved places for the owner the account has now, as `reserve` made it.
    func batchOut(places: Int, callsPerPlace: Double) -> QuotaReservation {
        let asking = askingNow
        return QuotaReservation(
            places: places, callsPerPlace: callsPerPlace, provider: asking.provider, url: asking.url,
            keyed: asking.keyed)
    }

    /// Settles `places` reserved places of the owner asked now.
    func settle(places: Int, callsPerPlace: Double, spent: Double, at now: Double) {
        settle(batchOut(places: places, callsPerPlace: callsPerPlace), spent: spent, at: now)
    }

    /// A quota refusal of the owner asked now.
    func beginQuietPeriod(reason: String, until: Double) -> QuietPeriod {
        beginQuietPeriod(reason: reason, until: until, refusing: batchOut(places: 0, callsPerPlace: 0))!
    }
}
