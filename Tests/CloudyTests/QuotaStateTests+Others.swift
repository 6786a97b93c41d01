import Foundation
import XCTest

@testable import Cloudy

/// What quota.json keeps of the owners a reload left (`QuotaState.others`): those that still say
/// something, the refusals in force first, a few at most; and which one a start takes for its own.
extension QuotaStateTests {
    func account(_ url: String, at time: Double, key: String? = nil) -> QuotaAccount {
        QuotaAccount(
            provider: .darkSky, url: url, quota: Quota(limits: [.month: 10_000]), file: file, now: time,
            logger: rig.log.logger, key: key)
    }

    /// Servers left, each refused for longer than the one before, and one that spent nothing
    /// and was refused nothing: the file keeps those refused, longest first, up to eight, and
    /// not the silent one.
    func testTheFileKeepsTheOwnersLeftThatSaySomethingAndAFewAtMost() throws {
        let now = rig.clock.now()
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        let asking = account("http://silent", at: now)
        func leave(for servers: Range<Int>) throws -> [String]? {
            for server in servers {
                asking.update(
                    provider: .darkSky, url: "http://server-\(server)", quota: Quota(limits: [.month: 10_000]))
                let batch = asking.reserve(upTo: 1, callsPerPlace: 1, at: now)
                asking.settle(batch, spent: 1, at: now)
                _ = asking.beginQuietPeriod(reason: "spent", until: now + 3600 + Double(server), refusing: batch)
            }
            asking.update(provider: .darkSky, url: "http://asked-now", quota: Quota(limits: [.month: 10_000]))
            let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
            XCTAssertEqual(kept.url, "http://asked-now")
            return kept.others?.map(\.url)
        }
        XCTAssertEqual(try leave(for: 0..<3), ["http://server-2", "http://server-1", "http://server-0"])
        XCTAssertEqual(try leave(for: 3..<10), (2..<10).reversed().map { "http://server-\($0)" })
    }

    /// A file an older Cloudy wrote for the server counts for any key; one written since says
    /// which: a start with that key takes the one that says, not the older one.
    func testAStartTakesTheOwnerKeptWithItsKeyBeforeOneThatDoesNotSay() throws {
        let now = rig.clock.now()
        let key = Secret("the-key").fingerprint
        func owner(keyed: Bool?, key: String?, until: Double) -> QuotaState {
            QuotaState(
                provider: .darkSky, url: "http://pirate", ledger: CallLedger(),
                quietPeriod: QuietPeriod(provider: .darkSky, reason: "spent", until: until), keyed: keyed, key: key)
        }
        var written = owner(keyed: nil, key: nil, until: now + 60)
        written.others = [owner(keyed: false, key: key, until: now + 7200)]
        try written.write(to: file)
        XCTAssertEqual(account("http://pirate", at: now, key: key).quietPeriod?.until, now + 7200)
    }

    /// A refusal that lifted ranks no higher than no refusal: an owner left that spent last comes
    /// before one whose refusal is over, whatever its length.
    func testALiftedRefusalDoesNotPutAnOwnerLeftFirst() throws {
        let now = rig.clock.now()
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        let asking = account("http://lifted", at: now)
        func spend(at time: Double) -> QuotaReservation {
            let batch = asking.reserve(upTo: 1, callsPerPlace: 1, at: time)
            asking.settle(batch, spent: 1, at: time)
            return batch
        }
        _ = asking.beginQuietPeriod(reason: "spent", until: now + 10, refusing: spend(at: now))
        asking.update(provider: .darkSky, url: "http://spent-last", quota: Quota(limits: [.month: 10_000]))
        _ = spend(at: now + 50)
        asking.update(provider: .darkSky, url: "http://asked-now", quota: Quota(limits: [.month: 10_000]))
        _ = spend(at: now + 100)
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(kept.others?.map(\.url), ["http://spent-last", "http://lifted"])
    }

    /// What an account a reload left tells the one keeping the file: of an owner known already,
    /// the ledger spent last is kept, whatever order they come in; what it knows of the file
    /// keeper's own owner (a refusal) is taken in, not dropped.
    func testWhatTheAccountsLeftKnowIsTakenInFreshestFirst() throws {
        let now = rig.clock.now()
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        let keeper = account("http://keeper", at: now)
        func mirror(spentAt time: Double, calls: Double) -> QuotaState {
            var ledger = CallLedger()
            ledger.record(calls, at: time, keeping: QuotaWindow.month.seconds)
            return QuotaState(provider: .darkSky, url: "http://mirror", ledger: ledger)
        }
        keeper.keep(beside: [mirror(spentAt: now + 5, calls: 7)])
        keeper.keep(beside: [mirror(spentAt: now + 1, calls: 2)])
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(kept.others?.first?.ledger.spent(inLast: 60, at: now + 5), 7, "the ledger spent last")

        let refused = QuotaState(
            provider: .darkSky, url: "http://keeper", ledger: CallLedger(),
            quietPeriod: QuietPeriod(provider: .darkSky, reason: "spent", until: now + 3600))
        keeper.keep(beside: [refused])
        XCTAssertEqual(keeper.quietPeriod?.until, now + 3600, "its own owner's refusal, taken in")
    }

    /// A batch out when a reload changes the owner counts for the owner it asked, in the file
    /// too: a crash before its answer neither loses its calls for that owner (a restart on the
    /// config rolled back) nor charges them to the owner asked now; back to that owner, they are
    /// its own again.
    func testABatchOutAtAReloadIsWrittenForTheOwnerItAsked() throws {
        let now = rig.clock.now()
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        let asking = account("http://first", at: now)
        let batch = asking.reserve(upTo: 7, callsPerPlace: 1, at: now)
        func written() throws -> (asked: Double, left: [String: Double]) {
            let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
            let month = QuotaWindow.month.seconds
            var left: [String: Double] = [:]
            for other in kept.others ?? [] { left[other.url] = other.ledger.spent(inLast: month, at: now) }
            return (kept.ledger.spent(inLast: month, at: now), left)
        }
        XCTAssertEqual(try written().asked, 7, "out, counted as spent")

        asking.update(provider: .darkSky, url: "http://second", quota: Quota(limits: [.month: 10_000]))
        XCTAssertEqual(try written().asked, 0, "not the second owner's")
        XCTAssertEqual(try written().left, ["http://first": 7])
        // Nor does what an account taking the second owner's quota over carries
        // (`kept(sharedWith:)`); one taking the first's has the batch's calls forwarded when it
        // settles, so they are not in what it carries either.
        let month = QuotaWindow.month.seconds
        XCTAssertEqual(asking.kept { _, url in url == "http://second" }?.ledger.spent(inLast: month, at: now), 0)
        XCTAssertEqual(asking.kept { _, url in url == "http://first" }?.ledger.spent(inLast: month, at: now), 0)

        asking.update(provider: .darkSky, url: "http://first", quota: Quota(limits: [.month: 10_000]))
        XCTAssertEqual(try written().asked, 7, "the first owner's own again")
        asking.update(provider: .darkSky, url: "http://second", quota: Quota(limits: [.month: 10_000]))
        XCTAssertEqual(try written().left, ["http://first": 7], "counted once")

        asking.settle(batch, spent: 0, at: now)  // never reached the owner
        XCTAssertEqual(try written().asked, 0)
        XCTAssertEqual(try written().left, [:], "nothing spent, nothing out: nothing to keep")
    }
}
