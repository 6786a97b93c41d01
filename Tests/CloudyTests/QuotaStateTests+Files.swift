import Foundation
import Logging
import XCTest

@testable import Cloudy

/// A quota.json Cloudy cannot read is ignored with a log line, and set aside before the state
/// is written afresh; an owner left before that is out of range is left out alone.
extension QuotaStateTests {
    /// Ignored, and set aside as quota.json.unreadable before the state is written afresh, so
    /// what was in it is still there for the operator to read.
    func testAnUnreadableOrOversizedFileIsIgnoredWithALogLine() throws {
        let aside = file.appendingPathExtension("unreadable")
        let truncated = Data("{\"provider\":\"open-meteo\",".utf8)
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try truncated.write(to: file)
        rig.start(rig.config(places: 1, interval: 60))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)
        let ignored = rig.log.entries(containing: "ignoring unreadable quota state file")
        XCTAssertEqual(ignored.count, 1)
        XCTAssertEqual(ignored.first?.metadata["set_aside_as"], "\(aside.path)")
        XCTAssertEqual(try Data(contentsOf: aside), truncated, "kept as it was")

        try Data(repeating: 0x20, count: QuotaState.maxFileBytes + 1).write(to: file)
        restart(rig.config(places: 1, interval: 60))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 2)
        XCTAssertEqual(rig.log.entries(containing: "ignoring the quota state file: too big").count, 1)
        XCTAssertEqual(try Data(contentsOf: aside).count, QuotaState.maxFileBytes + 1, "the latest one set aside")

        // A directory where the file should be: the system's words, not Foundation's error dump.
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "set aside, and no quota to write it again")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        restart(rig.config(places: 1, interval: 60))
        rig.clock.advance(by: 0)
        let unreadable = rig.log.entries(containing: "ignoring unreadable quota state file")
        XCTAssertEqual(unreadable.count, 2)
        XCTAssertEqual("\(unreadable.last?.metadata["error"] ?? "")", file.path + ": Is a directory")
        XCTAssertNil(unreadable.last?.metadata["set_aside_as"], "a directory is left where it is")
    }

    /// Set aside whatever the log level: at `--log.level=error` the warning is not written, and
    /// the file must not be overwritten for it.
    func testAnUnreadableFileIsSetAsideWhenWarningsAreNotLogged() throws {
        let truncated = Data("{\"provider\":".utf8)
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try truncated.write(to: file)
        var quiet = Logger(label: "cloudy.test")
        quiet.logLevel = .error
        let account = QuotaAccount(
            provider: .openMeteo, url: rig.server.baseURL, quota: Quota(limits: [.day: 10_000]), file: file,
            now: rig.clock.now(), logger: quiet)
        _ = account.reserve(upTo: 1, callsPerPlace: 1, at: rig.clock.now())  // writes the state afresh
        XCTAssertEqual(try Data(contentsOf: file.appendingPathExtension("unreadable")), truncated)
        XCTAssertNotNil(QuotaState.read(from: file, logger: rig.log.logger), "the state written afresh")
    }

    /// A link at quota.json is not moved and its target never written: the state written afresh
    /// replaces the link. A file that cannot be moved (a directory in the way) says why, naming
    /// where it was to go.
    func testALinkIsReplacedAndASetAsideThatFailsSaysWhy() throws {
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        let target = rig.storage.appendingPathComponent("elsewhere.json")
        let truncated = Data("{\"provider\":".utf8)
        try truncated.write(to: target)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
        func start() -> RecordedLog.Entry? {
            let account = QuotaAccount(
                provider: .openMeteo, url: rig.server.baseURL, quota: Quota(limits: [.day: 10_000]), file: file,
                now: rig.clock.now(), logger: rig.log.logger)
            _ = account.reserve(upTo: 1, callsPerPlace: 1, at: rig.clock.now())  // writes the state afresh
            return rig.log.entries(containing: "ignoring unreadable quota state file").last
        }
        let ignored = try XCTUnwrap(start())
        XCTAssertNil(ignored.metadata["set_aside_as"], "a link is left where it is")
        XCTAssertNil(ignored.metadata["not_set_aside"])
        XCTAssertEqual(try Data(contentsOf: target), truncated, "the link's target is not written")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        XCTAssertEqual(attributes[.type] as? FileAttributeType, .typeRegular, "the state replaced the link")
        XCTAssertNotNil(QuotaState.read(from: file, logger: rig.log.logger))

        let aside = file.appendingPathExtension("unreadable")
        try FileManager.default.createDirectory(
            at: aside.appendingPathComponent("full"), withIntermediateDirectories: true)
        try truncated.write(to: file)
        let unmoved = try XCTUnwrap(start())
        XCTAssertNil(unmoved.metadata["set_aside_as"])
        XCTAssertEqual(unmoved.metadata["not_set_aside"], "\(aside.path): Is a directory")
    }

    /// An owner left before whose ledger is out of range (an edit by hand) is left out with a log
    /// line; the owner's own state and the other owners left still count.
    func testAnOwnerLeftWithCallsOutOfRangeIsLeftOut() throws {
        let json = """
            {"provider":"open-meteo","url":"http://a","ledger":{"hours":[],"minutes":[],"recent":[{"time":5,"calls":2}]},
            "others":[{"provider":"open-meteo","url":"http://b","ledger":{"hours":[],"minutes":[],
            "recent":[{"time":5,"calls":-1}]}},{"provider":"open-meteo","url":"http://c","ledger":{"hours":[],
            "minutes":[],"recent":[{"time":5,"calls":3}]}}]}
            """
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: file)
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(kept.ledger.spent(inLast: 60, at: 10), 2)
        XCTAssertEqual(kept.others?.map(\.url), ["http://c"])
        XCTAssertEqual(
            rig.log.entries(containing: "calls out of range")
                .first?.metadata["owners"], "open-meteo http://b")
    }
}
