import Foundation
import Logging
import XCTest

@testable import Cloudy

/// A quota whose window allows less than one place's request (a tiny stated quota, or a shard's
/// share of one): pacing never splits a place, so that window gets the place alone at any
/// interval, and the plan, `--config.check` and `refresh.over_quota` say so.
final class QuotaPlanOnePlaceTests: XCTestCase {
    /// Two places of a shard of four sharing 10 calls a minute: 2.5 each, and one place is 2.9.
    func shard(overQuota: OverQuota = .stretch) -> Config {
        var config = Config(
            refresh: RefreshSettings(interval: 600, overQuota: overQuota),
            places: [Place(name: "A", latitude: 1, longitude: 1), Place(name: "B", latitude: 2, longitude: 2)])
        config.quota = QuotaSettings(stated: Quota(limits: [.minute: 10]))
        config.shard = Shard(index: 1, count: 4)
        return config
    }

    func testAWindowBelowOnePlaceFitsAtNoIntervalAndShowsThePlaceAlone() {
        let plan = RefreshPlan(shard())
        XCTAssertEqual(plan.callsPerPlaceAtMost, 2.9, accuracy: 1e-9)
        XCTAssertEqual(plan.windowBelowOnePlace, .minute)
        XCTAssertFalse(plan.fits)
        XCTAssertEqual(plan.planned(.minute), 2.9, accuracy: 1e-9, "a busy minute gets one place, not 0.58")
        XCTAssertEqual(
            plan.summary,
            "2 places, open-meteo: 5.8 calls per refresh, 2.9 a minute at 10m; this shard's 1/4 share of "
                + "provider.quota allows 2.5 a minute: one place alone is 2.9 calls, 116 % of it, at any interval")
        XCTAssertFalse(RefreshPlan(shard(), alongside: []).fits, "at any interval")
        var longer = shard()
        longer.refresh.interval = 86_400
        XCTAssertFalse(RefreshPlan(longer).fits, "at any interval")

        var own = shard()
        own.quota.perShard = true
        XCTAssertNil(RefreshPlan(own).windowBelowOnePlace, "10 a minute each: a place fits")
        XCTAssertTrue(RefreshPlan(own).summary.hasSuffix("provider.quota allows 10 a minute: fits (58 % of it)"))
        let airQuality = RefreshPlan(own, alongside: [QuotaSpending(feed: "air quality", callsPerPlace: 9.5)])
        XCTAssertEqual(airQuality.windowBelowOnePlace, .minute, "the air quality's place is 9.5 of the 9 allowed")
    }

    func testOverQuotaRefusesItAndOtherwiseLogsIt() {
        XCTAssertThrowsError(try FairUse.clampInterval(shard(overQuota: .refuse), file: "c.yml", logger: silent)) {
            XCTAssertTrue("\($0)".hasPrefix("c.yml: provider.quota: 2 places, open-meteo:"), "\($0)")
            XCTAssertTrue(
                "\($0)".hasSuffix("at any interval (refresh.over_quota: refuse; see docs/providers.md)"), "\($0)")
        }
        for mode in [OverQuota.stretch, .warn] {
            let log = RecordedLog()
            let inUse = try? FairUse.clampInterval(shard(overQuota: mode), file: "c.yml", logger: log.logger)
            XCTAssertEqual(inUse?.refresh.interval, 600, "\(mode): the minute does not fit at any interval")
            let warned = log.entries(containing: "one place's request is more than the provider's quota allows")
            XCTAssertEqual(warned.count, 1, "\(mode)")
            XCTAssertEqual(warned.first?.level, .warning)
        }
    }

    let silent = Logger(label: "quota-test") { _ in SwiftLogNoOpLogHandler() }
}

extension QuotaPlanOnePlaceTests {
    /// Batches of fractional weights settled in another order than they were reserved leave no
    /// residue that would count as a batch still out (and keep a place too big for the window
    /// from ever going alone).
    func testSettledBatchesLeaveNothingReserved() {
        let account = QuotaAccount(
            provider: .openMeteo, url: "http://127.0.0.1:1", quota: Quota(limits: [.minute: 100]), file: nil, now: 0,
            logger: silent)
        let small = 0.1 * 3  // 0.30000000000000004
        XCTAssertEqual(account.reserve(upTo: 1, callsPerPlace: 2.9, at: 0).places, 1)
        XCTAssertEqual(account.reserve(upTo: 1, callsPerPlace: small, at: 0).places, 1)
        account.settle(places: 1, callsPerPlace: small, spent: 0, at: 1)
        account.settle(places: 1, callsPerPlace: 2.9, spent: 0, at: 1)
        account.update(provider: .openMeteo, url: "http://127.0.0.1:1", quota: Quota(limits: [.minute: 2]))
        XCTAssertEqual(
            account.reserve(upTo: 2, callsPerPlace: 2.9, at: 1).places, 1, "one place alone in an empty minute")
    }
}

extension QuotaPlanOnePlaceTests {
    /// A reload that drops the quota while a batch is out: the batch is still settled, so when a
    /// quota comes back no phantom batch keeps a place too big for the window from going alone.
    func testABatchOutWhenAReloadDropsTheQuotaIsStillSettled() {
        let url = "http://127.0.0.1:1"
        let tiny = Quota(limits: [.minute: 2])
        let account = QuotaAccount(provider: .openMeteo, url: url, quota: tiny, file: nil, now: 0, logger: silent)
        XCTAssertEqual(account.reserve(upTo: 1, callsPerPlace: 2.9, at: 0).places, 1)
        account.update(provider: .openMeteo, url: url, quota: .unlimited)
        account.settle(places: 1, callsPerPlace: 2.9, spent: 0, at: 1)
        account.update(provider: .openMeteo, url: url, quota: tiny)
        XCTAssertEqual(
            account.reserve(upTo: 2, callsPerPlace: 2.9, at: 1).places, 1, "an empty minute: one place alone")
    }
}

extension QuotaPlanOnePlaceTests {
    /// The plan reads "an hour", as it reads "a minute" and "a day".
    func testThePlanSaysAnHour() {
        var config = Config(
            refresh: RefreshSettings(interval: 3600),
            places: (0..<20).map { Place(name: "P\($0)", latitude: Double($0), longitude: 1) })
        config.quota = QuotaSettings(stated: Quota(limits: [.hour: 20]))
        XCTAssertTrue(
            RefreshPlan(config).summary.hasPrefix(
                "20 places, open-meteo: 58 calls per refresh, 18 an hour at 1h; provider.quota allows 20 an hour"),
            RefreshPlan(config).summary)
        XCTAssertEqual(QuotaWindow.allCases.map(RefreshPlan.per), ["a minute", "an hour", "a day", "a month"])
    }
}
