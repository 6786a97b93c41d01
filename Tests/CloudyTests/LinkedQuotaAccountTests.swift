import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// The forecast's account and the air quality's own account count one quota while each asks
/// another server (`QuotaAccount.linkedAccount`): what one learns of the server the other asks
/// reaches the other at once, not at the next reload that brings them together.
final class LinkedQuotaAccountTests: XCTestCase {
    let (host, mirror, now) = ("https://api.open-meteo.com", "http://mirror.internal", 1_781_526_034.0)
    let daily = "open-meteo: HTTP 429: Daily API request limit exceeded. Please try again tomorrow."
    let logger = RecordedLog().logger

    /// The air quality's own account on `settings`' server, linked to `weather`'s as the feed
    /// makes it.
    func airQuality(of weather: QuotaAccount, _ settings: AirQualitySettings = AirQualitySettings()) -> QuotaAccount {
        let sharedQuota: @Sendable (ProviderName, String) -> Bool = { settings.countsWith($0, url: $1) }
        return weather.linkedAccount(counting: sharedQuota) { carried in
            QuotaAccount(
                provider: .openMeteo, upstream: "open-meteo-air-quality", url: settings.url,
                quota: settings.ownQuota, file: nil, now: self.now, logger: self.logger, carried: carried)
        }
    }

    /// A batch to the public host out when the forecast moved to a mirror: the calls it spent and
    /// the day's refusal it brings back reach the air quality asking that quota now, whose feed
    /// is told, while the forecast on the mirror is not held.
    func testWhatABatchToTheServerLeftBringsBackReachesTheAccountAskingItsQuotaNow() {
        let weather = QuotaAccount(
            provider: .openMeteo, url: host, quota: .freeTier(ProviderSettings()), file: nil, now: now,
            logger: logger)
        let batch = weather.reserve(upTo: 100, callsPerPlace: 1, at: now)
        XCTAssertEqual(batch.places, 100)
        weather.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        let own = airQuality(of: weather)
        let other = airQuality(of: weather, AirQualitySettings(url: "http://air.internal"))  // a quota of its own
        final class Feed: Sendable {}
        let feed = Feed()
        let told = NIOLockedValueBox<[Double]>([])
        own.observeQuietPeriods(for: feed) { _, quiet in told.withLockedValue { $0.append(quiet.until) } }

        weather.settle(batch, spent: 100, at: now + 2)
        XCTAssertEqual(own.spent(inLast: 86_400, at: now + 3), 100, "the calls the batch spent")
        XCTAssertNil(
            weather.beginQuietPeriod(reason: daily, until: now + 3600, refusing: batch),
            "the forecast on the mirror is not held")
        XCTAssertNil(weather.quietPeriod)
        XCTAssertEqual(own.quietPeriod?.until, now + 3600, "the air quality on the refusing quota is")
        XCTAssertEqual(told.withLockedValue { $0 }, [now + 3600], "and its feed is told")
        withExtendedLifetime(feed) {}
        XCTAssertEqual(other.spent(inLast: 86_400, at: now + 3), 0, "another quota hears nothing")
        XCTAssertNil(other.quietPeriod)

        weather.update(provider: .openMeteo, url: host, quota: .freeTier(ProviderSettings()))
        XCTAssertEqual(weather.quietPeriod?.until, now + 3600, "kept for a reload back too")
        XCTAssertEqual(weather.spent(inLast: 86_400, at: now + 3), 100, "counted once")
    }

    /// A reload of the forecast onto the quota the air quality alone was refused: the forecast's
    /// account knows the refusal and the calls as soon as it moves, before its feed asks (the air
    /// quality's feed joins it only after its own batch out is in). Onto another quota: nothing.
    func testAReloadOntoTheQuotaOfALinkedAccountKnowsItsRefusalAtOnce() {
        for (url, knows) in [(host, true), ("http://other.internal", false)] {
            let weather = QuotaAccount(
                provider: .openMeteo, url: mirror, quota: .unlimited, file: nil, now: now, logger: logger)
            let own = airQuality(of: weather)
            own.settle(places: 40, callsPerPlace: 1, spent: 40, at: now + 10)
            _ = own.beginQuietPeriod(reason: daily, until: now + 3600)
            XCTAssertTrue(weather.update(provider: .openMeteo, url: url, quota: .freeTier(ProviderSettings(url: url))))
            XCTAssertEqual(weather.quietPeriod?.until, knows ? now + 3600 : nil, url)
            XCTAssertEqual(weather.spent(inLast: 86_400, at: now + 20), knows ? 40 : 0, url)
            withExtendedLifetime(own) {}
        }
    }

    /// A key makes the forecast's quota the key's (Open-Meteo's commercial API): nothing passes
    /// between it and the air quality's free one, either way.
    func testAForecastAskedWithAKeySharesNothingWithTheFreeAirQuality() {
        let weather = QuotaAccount(
            provider: .openMeteo, url: host, quota: .unlimited, file: nil, now: now, logger: logger, keyed: true)
        let batch = weather.reserve(upTo: 100, callsPerPlace: 1, at: now)
        _ = weather.beginQuietPeriod(reason: "open-meteo: HTTP 429: Minutely limit", until: now + 60)
        weather.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        let own = airQuality(of: weather)
        XCTAssertNil(own.quietPeriod, "not carried over")
        weather.settle(batch, spent: 100, at: now + 2)
        XCTAssertNil(weather.beginQuietPeriod(reason: daily, until: now + 3600, refusing: batch))
        XCTAssertEqual(own.spent(inLast: 86_400, at: now + 3), 0, "not forwarded")
        XCTAssertNil(own.quietPeriod)

        _ = own.beginQuietPeriod(reason: daily, until: now + 7200)
        weather.update(provider: .openMeteo, url: host, quota: .unlimited, keyed: true)
        XCTAssertEqual(weather.quietPeriod?.until, now + 3600, "its own refusal, kept for it")
        XCTAssertEqual(weather.spent(inLast: 86_400, at: now + 3), 100)
    }

    /// A key added on the same URL is another quota: the paying forecast is not held by the free
    /// one's refusal, and the air quality left on the free one still is, after a reload and
    /// after a restart (quota.json keeps whether a key was used).
    func testAKeyAddedOnTheSameURLIsAnotherQuota() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: storage) }
        let file = QuotaState.file(in: storage.path)
        let (free, paid) = (Quota.freeTier(ProviderSettings()), Quota(limits: [.day: 1_000_000]))
        let weather = QuotaAccount(provider: .openMeteo, url: host, quota: free, file: file, now: now, logger: logger)
        _ = weather.beginQuietPeriod(reason: daily, until: now + 3600)
        let restarted = QuotaAccount(
            provider: .openMeteo, url: host, quota: paid, file: file, now: now + 60, logger: logger, keyed: true)
        XCTAssertNil(restarted.quietPeriod, "restarted with a key: the key's quota")
        XCTAssertEqual(airQuality(of: restarted).quietPeriod?.until, now + 3600, "the free one's refusal")

        XCTAssertTrue(weather.update(provider: .openMeteo, url: host, quota: paid, keyed: true))
        XCTAssertNil(weather.quietPeriod, "reloaded with a key")
        XCTAssertEqual(airQuality(of: weather).quietPeriod?.until, now + 3600)
        weather.settle(places: 3, callsPerPlace: 1, spent: 3, at: now + 61)
        XCTAssertEqual(QuotaState.read(from: file, logger: logger)?.keyed, true, "written with a key")
        let again = QuotaAccount(
            provider: .openMeteo, url: host, quota: paid, file: file, now: now + 62, logger: logger, keyed: true)
        XCTAssertEqual(again.spent(inLast: 3600, at: now + 62), 3, "the key's calls, read back")
        let withoutKey = QuotaAccount(
            provider: .openMeteo, url: host, quota: free, file: file, now: now + 63, logger: logger)
        XCTAssertEqual(withoutKey.spent(inLast: 3600, at: now + 63), 0, "not the free quota's")
    }

    /// A batch out across two reloads that come back to its server spelt otherwise (`localhost`
    /// for `127.0.0.1`, a trailing slash) asked the owner the account has now: its calls and
    /// refusal hold here, not under the old spelling; and a reload left that spelling, the entry
    /// kept for the server, however it is spelt now.
    func testABatchOutToAServerSpeltOtherwiseIsFiledForThatServer() throws {
        let (server, respelt) = ("http://127.0.0.1:8080", "http://localhost:8080/")
        let quota = Quota(limits: [.day: 100])
        let account = QuotaAccount(provider: .openMeteo, url: server, quota: quota, file: nil, now: now, logger: logger)
        let batch = account.reserve(upTo: 2, callsPerPlace: 1, at: now)
        account.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        account.update(provider: .openMeteo, url: respelt, quota: quota)
        XCTAssertTrue(account.isAsking(batch))
        let period = try XCTUnwrap(account.beginQuietPeriod(reason: daily, until: now + 3600, refusing: batch))
        XCTAssertEqual(period.until, now + 3600)
        XCTAssertEqual(account.quietPeriod?.until, now + 3600)
        account.settle(batch, spent: 2, at: now + 1)
        XCTAssertEqual(account.spent(inLast: 86_400, at: now + 2), 2)

        let second = account.reserve(upTo: 3, callsPerPlace: 1, at: now + 10)  // asked as `respelt`
        account.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        account.settle(second, spent: 3, at: now + 11)
        account.update(provider: .openMeteo, url: "http://127.0.0.1:8080/v1", quota: quota)
        XCTAssertEqual(account.spent(inLast: 86_400, at: now + 12), 5, "one entry for the server")
    }
}
