import Foundation
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// The calls spent and a quiet period survive a restart (`<storage.path>/quota.json`), so an
/// exporter that crash-loops does not send a full refresh per start into a daily quota; a file
/// that does not decode, or is too big, is ignored with a log line. On a `ManualClock`, through
/// libcurl to a scripted Open-Meteo, restarting the refresher on the same storage.
final class QuotaStateTests: XCTestCase {
    var rig: RefresherRig!

    override func setUpWithError() throws {
        rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
    }

    override func tearDown() {
        rig.stop()
    }

    var file: URL { rig.storage.appendingPathComponent("quota.json") }

    /// Stops the refresher and starts a new one on the same storage, as a restart does.
    func restart(_ config: Config, budget: CallBudget? = nil) {
        rig.refresher.stop()
        rig.start(config, budget: budget)
    }

    func testCallsSpentBeforeARestartStillPaceTheFirstRefreshAfterIt() throws {
        let budget = CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1)
        let config = rig.config(places: 25, interval: 600)
        rig.start(config, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [9])
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path))
        rig.clock.advance(by: 10)
        restart(config, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [9], "the minute still holds the nine calls")
        XCTAssertEqual(
            try XCTUnwrap(rig.nextRefreshIn), 51, accuracy: 1e-6, "a minute after the first batch, and a second")
        XCTAssertEqual(rig.log.entries(containing: "calls spent before the restart still count").count, 1)
        XCTAssertEqual(
            rig.readyz,
            "not ready: waiting for the first refresh of 25 of 25 places; the next batch goes at "
                + "\(QuietPeriod.utcTime(rig.clock.now() + 51)), paced to stay within the provider's quota")
        rig.clock.advance(by: 51)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertTrue(rig.readyz.hasPrefix("not ready: waiting for the first refresh of 16 of 25 places; "), rig.readyz)
        rig.clock.advance(by: 180)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 9, 7])
        XCTAssertEqual(rig.readyz, "ready", "no batch waits: nothing about pacing")

        // The same server under another spelling is the same quota: the minute still holds 7.
        var respelled = config
        respelled.provider = ProviderSettings(
            url: rig.server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        restart(respelled, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 9, 7, 2])
        // Another server is another quota: what was spent on this one does not hold it back.
        let mirror = try rig.mirror()
        defer { mirror.server.stop() }
        var other = config
        other.provider = ProviderSettings(url: mirror.server.baseURL)
        restart(other, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(mirror.asked.withLockedValue { $0 }, [9])
    }

    func testAQuietPeriodSurvivesARestart() throws {
        rig.answer(status: .tooManyRequests, reason: "Daily API request limit exceeded. Please try again tomorrow.")
        let config = rig.config(places: 2, interval: 60)
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)
        rig.answerForecasts()
        restart(config)
        rig.clock.advance(by: 3600)
        XCTAssertEqual(rig.asked.count, 1, "nothing is sent before the day's quota starts afresh")
        XCTAssertTrue(rig.readyz.contains("no requests to open-meteo until 2026-06-16 00:01:00 UTC"), rig.readyz)
        rig.clock.advance(by: try XCTUnwrap(rig.nextRefreshIn))
        XCTAssertEqual(rig.asked.count, 2, "\(rig.asked.map { ($0.time - 1_781_526_034, $0.places) })")
        XCTAssertEqual(rig.placesUp, 2)
        XCTAssertEqual(rig.readyz, "ready")
    }

    /// A refusal for the minute that comes in while the day's refusal holds (a batch that was in
    /// flight) does not shorten it.
    func testAShorterRefusalKeepsTheLongerQuietPeriod() {
        let account = QuotaAccount(
            provider: .openMeteo, url: "http://127.0.0.1:1", quota: .unlimited, file: nil, now: 0,
            logger: rig.log.logger)
        let day = account.beginQuietPeriod(reason: "Daily API request limit exceeded.", until: 86_460)
        let minute = account.beginQuietPeriod(reason: "Minutely API request limit exceeded.", until: 120)
        XCTAssertEqual(minute, day)
        XCTAssertEqual(account.quietPeriod, day)
        let later = account.beginQuietPeriod(reason: "Daily API request limit exceeded.", until: 172_860)
        XCTAssertEqual(account.quietPeriod, later, "a longer one replaces it")
    }

}

extension QuotaStateTests {
    /// A quiet period kept in the file holds at most a day (Dark Sky's a month): a file from an
    /// older version, or edited, cannot silence the exporter longer.
    func testAKeptQuietPeriodHoldsADayAtMost() throws {
        let now = rig.clock.now()
        let month = QuietPeriod(provider: .openMeteo, reason: "open-meteo: HTTP 429", until: now + 31 * 86400)
        let kept = QuotaState(provider: .openMeteo, url: rig.server.baseURL, ledger: CallLedger(), quietPeriod: month)
        try kept.write(to: file)
        let account = QuotaAccount(
            provider: .openMeteo, url: rig.server.baseURL, quota: .unlimited, file: file, now: now,
            logger: rig.log.logger)
        XCTAssertEqual(account.quietPeriod?.until, now + 86400)
        let darkSky = QuotaState(
            provider: .darkSky, url: rig.server.baseURL, ledger: CallLedger(),
            quietPeriod: QuietPeriod(provider: .darkSky, reason: "dark-sky: HTTP 429", until: now + 10 * 86400))
        try darkSky.write(to: file)
        let monthly = QuotaAccount(
            provider: .darkSky, url: rig.server.baseURL, quota: .unlimited, file: file, now: now,
            logger: rig.log.logger)
        XCTAssertEqual(monthly.quietPeriod?.until, now + 10 * 86400, "until the month turns (2026-07-01)")
    }

    /// The restart's log line counts fractional weights to a millionth, as the page does.
    func testTheRestartLogLineHasNoBinaryNoise() throws {
        let budget = CallBudget(quota: Quota(limits: [.day: 1000]), callsPerPlace: 0.1)
        let config = rig.config(places: 3, interval: 600)
        rig.start(config, budget: budget)
        rig.clock.advance(by: 0)
        restart(config, budget: budget)
        let line = try XCTUnwrap(rig.log.entries(containing: "calls spent before the restart still count").first)
        XCTAssertEqual("\(line.metadata["calls_last_day"] ?? "")", "0.3", "not 0.30000000000000004")
    }

    /// A feed that a reload replaced is let go by the account it spent, before any quiet period.
    func testTheAccountLetsGoOfFeedsThatAreGone() {
        final class Owner: Sendable {}
        let account = QuotaAccount(
            provider: .openMeteo, url: "http://127.0.0.1:1", quota: .unlimited, file: nil, now: 0,
            logger: rig.log.logger)
        let told = NIOLockedValueBox<[Double]>([])
        let kept = Owner()
        account.observeQuietPeriods(for: kept) { _, quiet in told.withLockedValue { $0.append(quiet.until) } }
        for _ in 0..<3 {
            let replaced = Owner()
            account.observeQuietPeriods(for: replaced) { _, _ in XCTFail("a gone owner is told nothing") }
        }
        XCTAssertEqual(account.quietPeriodObserverCount, 2, "the kept one and the last replaced one")
        _ = account.beginQuietPeriod(reason: "Daily API request limit exceeded.", until: 86_460)
        XCTAssertEqual(told.withLockedValue { $0 }, [86_460])
        XCTAssertEqual(account.quietPeriodObserverCount, 1)
        withExtendedLifetime(kept) {}
    }
}

extension QuotaStateTests {
    /// A batch out counts as spent in quota.json until its answers settle it, so an exporter that
    /// crashes before they are in (a crash loop) does not spend its calls again after the restart.
    func testABatchOutIsKeptAsSpentUntilItSettles() throws {
        let quota = Quota(limits: [.hour: 100])
        func restarted() -> QuotaAccount {
            QuotaAccount(
                provider: .openMeteo, url: "http://127.0.0.1:1", quota: quota, file: file, now: 1_000,
                logger: rig.log.logger)
        }
        let account = restarted()
        XCTAssertEqual(account.reserve(upTo: 2, callsPerPlace: 2.9, at: 1_000).places, 2)
        XCTAssertEqual(restarted().spent(inLast: 3600, at: 1_010), 5.8, accuracy: 1e-9, "out: counted")
        account.settle(places: 1, callsPerPlace: 2.9, spent: 2.9, at: 1_005)
        XCTAssertEqual(restarted().spent(inLast: 3600, at: 1_010), 5.8, accuracy: 1e-9, "one in, one still out")
        account.settle(places: 1, callsPerPlace: 2.9, spent: 0, at: 1_006)
        XCTAssertEqual(restarted().spent(inLast: 3600, at: 1_010), 2.9, accuracy: 1e-9, "cancelled: not spent")
        XCTAssertEqual(account.ledger.entries.map(\.calls), [2.9], "the ledger itself counts what was spent")
    }
}

extension QuotaStateTests {
    /// A quota.json that cannot be written is a warning when it starts and when its reason
    /// changes, not twice a batch; writing it again is said once.
    func testAFileThatCannotBeWrittenIsSaidOnceUntilItChanges() throws {
        let account = QuotaAccount(
            provider: .openMeteo, url: "http://127.0.0.1:1", quota: Quota(limits: [.hour: 100]), file: file,
            now: 1_000, logger: rig.log.logger)
        // A directory where the temporary file goes: open(2) fails with EISDIR, even for root.
        let blocker = file.appendingPathExtension("tmp")
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
        func batch(at time: Double) {
            XCTAssertEqual(account.reserve(upTo: 1, callsPerPlace: 1, at: time).places, 1)
            account.settle(places: 1, callsPerPlace: 1, spent: 1, at: time + 1)
        }
        for minute in 0..<3 { batch(at: 1_000 + Double(minute) * 60) }
        let warnings = rig.log.entries(containing: "cannot keep the quota state")
        XCTAssertEqual(warnings.count, 1, "six failed writes, one warning")
        XCTAssertEqual(warnings.first?.level, .warning)
        XCTAssertTrue("\(warnings.first?.metadata["error"] ?? "")".contains("Is a directory"), "\(warnings)")

        try FileManager.default.removeItem(at: blocker)
        batch(at: 1_200)
        XCTAssertEqual(rig.log.entries(containing: "the quota state is kept again").count, 1)
        let kept = QuotaState.load(from: file, provider: .openMeteo, url: "http://127.0.0.1:1", logger: rig.log.logger)
        XCTAssertEqual(
            try XCTUnwrap(kept).ledger.spent(inLast: 3600, at: 1_300), 4, accuracy: 1e-9,
            "every call, those of the failed writes too")

        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
        batch(at: 1_300)
        XCTAssertEqual(rig.log.entries(containing: "cannot keep the quota state").count, 2, "failing again is news")
        XCTAssertEqual(rig.log.entries(containing: "the quota state is kept again").count, 1)
    }
}

extension QuotaStateTests {
    /// A reload to another URL starts that owner afresh; a reload back finds the calls spent and
    /// the quiet period where it left them, so a mirror tried for a while does not send a batch
    /// into a day the public host already refused.
    func testAReloadBackToAnOwnerFindsItsCallsAndQuietPeriod() {
        let quota = Quota(limits: [.day: 100])
        let account = QuotaAccount(
            provider: .openMeteo, url: "https://api.open-meteo.com", quota: quota, file: file, now: 1_000,
            logger: rig.log.logger)
        XCTAssertEqual(account.reserve(upTo: 2, callsPerPlace: 3, at: 1_000).places, 2)
        account.settle(places: 2, callsPerPlace: 3, spent: 6, at: 1_001)
        _ = account.beginQuietPeriod(reason: "Daily API request limit exceeded.", until: 86_400)

        XCTAssertTrue(account.update(provider: .openMeteo, url: "http://mirror.internal", quota: quota))
        XCTAssertNil(account.quietPeriod, "another owner: not refused")
        XCTAssertEqual(account.spent(inLast: 86_400, at: 2_000), 0)
        account.settle(places: 1, callsPerPlace: 3, spent: 3, at: 2_000)

        XCTAssertTrue(account.update(provider: .openMeteo, url: "https://api.open-meteo.com", quota: quota))
        XCTAssertEqual(account.quietPeriod?.until, 86_400, "the refusal is still in force")
        XCTAssertEqual(account.spent(inLast: 86_400, at: 3_000), 6, accuracy: 1e-9, "its own calls, not the mirror's")
        let kept = QuotaState.load(
            from: file, provider: .openMeteo, url: "https://api.open-meteo.com", logger: rig.log.logger)
        XCTAssertEqual(kept?.quietPeriod?.until, 86_400, "and in quota.json again")

        // A reload back that spells the server otherwise finds them too.
        XCTAssertTrue(account.update(provider: .openMeteo, url: "HTTP://Mirror.internal:80/", quota: quota))
        XCTAssertEqual(account.spent(inLast: 86_400, at: 3_000), 3, accuracy: 1e-9, "the mirror's own")
        XCTAssertTrue(account.update(provider: .openMeteo, url: "https://api.open-meteo.com/v1", quota: quota))
        XCTAssertEqual(account.quietPeriod?.until, 86_400, "respelled: the refusal still holds")
    }
}

extension QuotaStateTests {
    /// A stop while two batches hang and a third waits for them: quota.json keeps the two sent,
    /// not the one the stop kept from going out (providers.md, "Across restarts").
    func testAStopTakesBackTheBatchItKeptFromGoingOut() throws {
        let budget = CallBudget(quota: Quota(limits: [.day: 100_000]), callsPerPlace: 2.9)
        var config = rig.config(places: 250)
        config.refresh.parallelRequests = 2
        rig.answer { _ in .hang }
        rig.start(config, budget: budget)
        let clock = rig.clock
        let refreshing = DispatchGroup()
        DispatchQueue.global().async(group: refreshing) { clock.advance(by: 0) }  // blocks in the batches
        let deadline = Date().addingTimeInterval(10)
        while rig.asked.count < 2, Date() < deadline { usleep(1000) }
        XCTAssertEqual(rig.asked.map(\.places), [100, 100], "two batches out, the third waiting")
        rig.refresher.stop()
        let kept = QuotaAccount(
            provider: .openMeteo, url: rig.server.baseURL, quota: budget.quota, file: file, now: clock.now(),
            logger: rig.log.logger)
        XCTAssertEqual(kept.spent(inLast: 86400, at: clock.now()), 580, accuracy: 1e-6, "200 places × 2.9, not 250")
        refreshing.wait()
    }
}
