import Foundation
import XCTest

@testable import Cloudy

/// A key added makes the quota another one only for Open-Meteo (its commercial API): a provider
/// always asked with a key keeps the quota.json written before the key counted, as it keeps any
/// of its own. Another key is another quota for every provider (`QuotaState.key`).
extension QuotaStateTests {
    /// A quota.json an older Cloudy wrote for `provider`, refused until `until`: no `keyed` field.
    func writeAnOlderFile(_ provider: ProviderName, until: Double) throws {
        let json = """
            {"provider":"\(provider.rawValue)","url":"\(rig.server.baseURL)",\
            "ledger":{"hours":[],"minutes":[],"recent":[]},"quietPeriod":{"provider":"\(provider.rawValue)",\
            "reason":"\(provider.rawValue): HTTP 429: the quota is spent","until":\(until)}}
            """
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: file)
        XCTAssertNil(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).keyed)
    }

    /// A Dark Sky config whose key, `spent-key`, the rig's server refuses for its month (any
    /// other key is answered).
    func darkSkyWithASpentKey() throws -> Config {
        let limited = Array(#"{"message":"API rate limit exceeded"}"#.utf8)
        let forecast = try TestPaths.fixtureBytes("pirateweather-forecast.json")
        rig.answer { head in
            head.uri.hasPrefix("/forecast/spent-key/")
                ? .respond(status: .tooManyRequests, headers: [("RateLimit-Remaining", "0")], body: limited)
                : .respond(status: .ok, headers: [], body: forecast)
        }
        var spent = rig.config(places: 1, interval: 600)
        spent.provider = ProviderSettings(name: .darkSky, url: rig.server.baseURL, apiKey: Secret("spent-key"))
        return spent
    }

    func testAProviderAlwaysAskedWithAKeyKeepsItsQuotaFileOverTheUpgrade() throws {
        let until = rig.clock.now() + 86_400
        try writeAnOlderFile(.darkSky, until: until)
        var config = rig.config(places: 1, interval: 600)
        config.provider = ProviderSettings(name: .darkSky, url: rig.server.baseURL, apiKey: Secret("k"))
        rig.start(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "the month's refusal still holds")
        XCTAssertFalse(config.provider.spendsAKeysQuota)

        var openMeteo = rig.config(places: 1, interval: 600)
        openMeteo.provider = ProviderSettings(name: .openMeteo, url: rig.server.baseURL, apiKey: Secret("k"))
        XCTAssertTrue(openMeteo.provider.spendsAKeysQuota, "the commercial API")
        openMeteo.provider.apiKey = nil
        XCTAssertFalse(openMeteo.provider.spendsAKeysQuota)
    }

    /// An Open-Meteo quota.json written before the key counted does not say whether a key was
    /// used: it stays the account's over the upgrade, with a key or without (one written since
    /// says: `LinkedQuotaAccountTests.testAKeyAddedOnTheSameURLIsAnotherQuota`).
    func testAnOlderOpenMeteoFileCountsWithAKeyOrWithout() throws {
        let until = rig.clock.now() + 3600
        try writeAnOlderFile(.openMeteo, until: until)
        var config = rig.config(places: 1, interval: 600)
        rig.start(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "without a key")
        config.provider.apiKey = Secret("k")
        restart(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "with one: the commercial API's refusal, kept")
    }

    /// A Dark Sky key whose month is spent holds no other key, after a restart or a reload, and
    /// is not forgotten: a reload back to it finds its refusal, and does not ask before it lifts.
    func testAnotherKeyIsAnotherQuotaOverARestartAndAReload() throws {
        let spent = try darkSkyWithASpentKey()
        rig.start(spent)
        rig.clock.advance(by: 0)
        let refused = try XCTUnwrap(rig.refresher.quietPeriod, "the month is spent")
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(kept.key, Secret("spent-key").fingerprint)
        XCTAssertFalse(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("spent-key"))

        var fresh = spent
        fresh.provider.apiKey = Secret("fresh-key")
        restart(fresh)
        XCTAssertNil(rig.refresher.quietPeriod, "another key's month")
        let afresh = try XCTUnwrap(rig.log.entries(containing: "the quota state file is for another").first)
        XCTAssertEqual(afresh.metadata["kept_for"], "dark-sky \(rig.server.baseURL) with a key")
        XCTAssertEqual(afresh.metadata["now_for"], "dark-sky \(rig.server.baseURL) with a key (another one)")
        let logged = rig.log.all.map { "\($0.message) \($0.metadata)" }
        XCTAssertFalse(logged.contains { $0.contains("sha256:") }, "nor its fingerprint")
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 2)
        XCTAssertEqual(rig.placesUp, 1, "the fresh key is asked and answered")

        rig.reload(to: spent, from: fresh)
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, refused.until, "the spent key's refusal, found again")
        XCTAssertEqual(rig.asked.count, 2, "and that key is not asked before it lifts")
        rig.reload(to: fresh, from: spent)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 3, "the fresh key is asked at once")
    }

    /// A key a reload left is kept in the file beside the one asked now: a restart on the config
    /// rolled back to it (a deploy undone) still finds its month refused and does not ask it, and
    /// the fresh key, left in turn, is kept the same way. What says nothing any more is dropped.
    func testARestartOnAConfigRolledBackFindsTheKeyAReloadLeft() throws {
        let spent = try darkSkyWithASpentKey()
        var fresh = spent
        fresh.provider.apiKey = Secret("fresh-key")
        rig.start(spent)
        rig.clock.advance(by: 0)
        let refused = try XCTUnwrap(rig.refresher.quietPeriod, "the month is spent")

        rig.reload(to: fresh, from: spent)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 2, "the fresh key is asked at once")
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(kept.key, Secret("fresh-key").fingerprint)
        XCTAssertEqual(kept.others?.map(\.key), [Secret("spent-key").fingerprint])
        XCTAssertEqual(kept.others?.first?.quietPeriod?.until, refused.until)

        restart(spent)
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, refused.until, "the spent key's refusal, over the restart")
        XCTAssertEqual(rig.asked.count, 2, "and it is not asked before it lifts")
        XCTAssertEqual(rig.log.entries(containing: "the quota state file is for another").count, 0)
        XCTAssertEqual(rig.log.entries(containing: "calls spent before the restart still count").count, 1)
        let rolledBack = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertEqual(
            Set([rolledBack.key] + (rolledBack.others ?? []).map(\.key)),
            [Secret("spent-key").fingerprint, Secret("fresh-key").fingerprint], "both keys, until the next save")

        // A month and a day on, neither the refusal nor the fresh key's call says anything.
        rig.clock.advance(by: QuotaWindow.month.seconds + 86_400)
        restart(fresh)
        rig.clock.advance(by: 0)
        XCTAssertNil(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).others)
    }

    /// A batch out when a reload leaves its owner for a mirror without a quota (whose batches
    /// write nothing) comes back refused for the day: the refusal is in the file at once, for a
    /// restart on the config rolled back.
    func testALateRefusalForTheOwnerAReloadLeftIsKeptInTheFile() throws {
        let now = rig.clock.now()
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        func account(at time: Double) -> QuotaAccount {
            QuotaAccount(
                provider: .openMeteo, url: "https://api.open-meteo.com", quota: Quota(limits: [.day: 10_000]),
                file: file, now: time, logger: rig.log.logger)
        }
        let asking = account(at: now)
        let batch = asking.reserve(upTo: 1, callsPerPlace: 1, at: now)
        asking.update(provider: .openMeteo, url: "http://mirror.example:8080", quota: .unlimited)
        XCTAssertNil(asking.beginQuietPeriod(reason: "daily limit", until: now + 50_000, refusing: batch))
        XCTAssertEqual(
            try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).others?.first?.quietPeriod?.until,
            now + 50_000)
        asking.settle(batch, spent: 1, at: now + 1)
        XCTAssertEqual(
            try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).others?.first?.ledger
                .spent(inLast: 60, at: now + 1), 1, "its calls too")
        XCTAssertEqual(account(at: now + 2).quietPeriod?.until, now + 50_000, "a restart rolled back finds it")
    }
}
