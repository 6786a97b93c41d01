import Foundation
import Logging
import XCTest

@testable import Cloudy

/// `refresh.stale_after` shorter than a refresh is raised: a place whose every refresh succeeds
/// must not lose its series between two of them. The default quietly; one the config writes with
/// a warning in the log and from `--config.check`.
final class StaleAfterFloorTests: XCTestCase {
    /// `count` places on Open-Meteo's free host, the interval and `stale_after` as given, as if the
    /// config wrote `stale_after` (`written`).
    func config(places count: Int, interval: Double = 600, staleAfter: Double = 1800, written: Bool = true) -> Config {
        var config = Config(
            refresh: RefreshSettings(interval: interval, timeout: 10, staleAfter: staleAfter),
            places: (0..<count).map { Place(name: "P\($0)", latitude: Double($0) / 2, longitude: Double($0)) })
        config.refresh.staleAfterIsWritten = written
        return config
    }

    func testTheQuotasStretchRaisesTheDefaultStaleAfterQuietly() throws {
        let log = RecordedLog()
        let inUse = try FairUse.clampInterval(config(places: 100, written: false), file: nil, logger: log.logger)
        // 100 places need 46m28s between refreshes on the free quota (QuotaPlanTests): the
        // default 30m would empty the page for 16 minutes of each.
        XCTAssertEqual(inUse.refresh.interval, 2_788)
        XCTAssertEqual(inUse.refresh.staleAfter, 2_788 + 1_394)
        XCTAssertEqual(log.entries(containing: "stale_after").count, 0)
    }

    func testAWrittenStaleAfterIsRaisedWithAWarning() throws {
        let log = RecordedLog()
        let inUse = try FairUse.clampInterval(config(places: 100), file: nil, logger: log.logger)
        XCTAssertEqual(inUse.refresh.staleAfter, 2_788 + 1_394)
        let raised = log.entries(containing: "refresh.stale_after raised")
        XCTAssertEqual(raised.count, 1)
        XCTAssertEqual(raised.first?.metadata["configured"], "30m")
        XCTAssertEqual(raised.first?.metadata["used"], "1h9m42s")
        XCTAssertEqual(raised.first?.metadata["interval"], "46m28s")
    }

    func testAStaleAfterThatOutlastsARefreshStaysAsWritten() throws {
        let log = RecordedLog()
        let five = try FairUse.clampInterval(config(places: 5), file: nil, logger: log.logger)
        XCTAssertEqual(five.refresh.interval, 600)
        XCTAssertEqual(five.refresh.staleAfter, 1800)
        let exact = try FairUse.clampInterval(config(places: 5, staleAfter: 900), file: nil, logger: log.logger)
        XCTAssertEqual(exact.refresh.staleAfter, 900, "10m and half of it: 15m is enough")
        XCTAssertEqual(log.entries(containing: "stale_after").count, 0)
    }

    func testTheLoaderSaysWhetherTheConfigWritesIt() throws {
        let places = "locations:\n  - {name: Berlin, latitude: 52.52, longitude: 13.41}\n"
        XCTAssertFalse(try ConfigLoader.parse(yaml: "refresh: {interval: 1h}\n" + places).refresh.staleAfterIsWritten)
        let written = try ConfigLoader.parse(yaml: "refresh: {stale_after: 30m}\n" + places).refresh
        XCTAssertTrue(written.staleAfterIsWritten)
        XCTAssertEqual(written, RefreshSettings(parallelRequests: 4), "how it came is not part of ==")
    }

    func testTheRoomIsAtLeastTheTimeout() throws {
        var short = config(places: 1, interval: 4, staleAfter: 3)
        short.provider = ProviderSettings(name: .openMeteo, url: "http://127.0.0.1:9")
        short.refresh.timeout = 10
        XCTAssertEqual(try FairUse.clampInterval(short, file: nil, logger: RecordedLog().logger).refresh.staleAfter, 14)
    }

    /// The warning lists go stale by `refresh.stale_after` too: it outlasts `warnings.interval`
    /// when a source is asked, and only then.
    func testTheWarningsIntervalCountsWhenASourceIsAsked() throws {
        var config = config(places: 1, interval: 60, staleAfter: 180)
        config.warnings = WarningSettings(interval: 300, sources: [])
        let log = RecordedLog()
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: log.logger).refresh.staleAfter, 180)
        config.warnings.sources = [WarningSourceSettings(name: .dwd)]
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: log.logger).refresh.staleAfter, 450)
        XCTAssertEqual(log.entries(containing: "refresh.stale_after raised").first?.metadata["interval"], "5m")
    }

    /// A written `stale_after` shorter than the interval gets a warning on stderr; the same config
    /// without it (the default follows the interval) gets none.
    func testConfigCheckWarnsOfAWrittenOneOnStandardError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-stale-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cloudy.yml").path
        let yaml = """
            provider:
              url: http://127.0.0.1:9
            refresh:
              interval: 2h
              stale_after: 30m
            locations:
              - name: Berlin
                latitude: 52.52
                longitude: 13.41

            """
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.hasPrefix("\(file): OK"), check.stdout)
        XCTAssertEqual(
            check.stderr,
            "\(file): warning: refresh.stale_after 30m is shorter than a refresh; raised to 3h (the longest interval "
                + "in use, the weather's 2h, and half of it, at least refresh.timeout), or series would vanish between "
                + "successes\n")

        try yaml.replacingOccurrences(of: "  stale_after: 30m\n", with: "").write(
            toFile: file, atomically: true, encoding: .utf8)
        let quiet = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stderr, "")
    }
}
