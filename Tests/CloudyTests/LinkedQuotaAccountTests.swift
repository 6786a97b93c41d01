import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// The forecast's account and the air quality's own account count one quota while each asks
/// another server (`QuotaAccount.link`): what one learns of the server the other asks reaches the
/// other at once, not at the next reload that brings them together.
final class LinkedQuotaAccountTests: XCTestCase {
    let (host, mirror, now) = ("https://api.open-meteo.com", "http://mirror.internal", 1_781_526_034.0)
    let daily = "open-meteo: HTTP 429: Daily API request limit exceeded. Please try again tomorrow."
    let logger = RecordedLog().logger

    /// The forecast on the mirror now, the air quality alone on the public hosts, and linked.
    func linked(_ settings: AirQualitySettings = AirQualitySettings()) -> (weather: QuotaAccount, own: QuotaAccount) {
        let weather = QuotaAccount(
            provider: .openMeteo, url: mirror, quota: .unlimited, file: nil, now: now, logger: logger)
        let own = QuotaAccount(
            provider: .openMeteo, upstream: "open-meteo-air-quality", url: settings.url,
            quota: .freeTier(ProviderSettings()), file: nil, now: now, logger: logger)
        weather.link(own) { settings.countsWith($0, url: $1) }
        return (weather, own)
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
        let settings = AirQualitySettings()
        let own = QuotaAccount(
            provider: .openMeteo, upstream: "open-meteo-air-quality", url: settings.url,
            quota: .freeTier(ProviderSettings()), file: nil, now: now + 1, logger: logger,
            carried: weather.kept(sharedWith: settings.countsWith))
        weather.link(own) { settings.countsWith($0, url: $1) }
        let elsewhere = AirQualitySettings(url: "http://air.internal")  // a server of its own: another quota
        let other = QuotaAccount(
            provider: .openMeteo, url: elsewhere.url, quota: .unlimited, file: nil, now: now, logger: logger)
        weather.link(other) { elsewhere.countsWith($0, url: $1) }
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
    /// quality's feed joins it only after its own batch out is in).
    func testAReloadOntoTheQuotaOfALinkedAccountKnowsItsRefusalAtOnce() {
        let (weather, own) = linked()
        own.settle(places: 40, callsPerPlace: 1, spent: 40, at: now + 10)
        _ = own.beginQuietPeriod(reason: daily, until: now + 3600)
        XCTAssertTrue(weather.update(provider: .openMeteo, url: host, quota: .freeTier(ProviderSettings())))
        XCTAssertEqual(weather.quietPeriod?.until, now + 3600)
        XCTAssertEqual(weather.spent(inLast: 86_400, at: now + 20), 40)

        let (away, _) = linked()  // to another server of its own: not the air quality's quota
        away.update(provider: .openMeteo, url: "http://other.internal", quota: .unlimited)
        XCTAssertNil(away.quietPeriod)
    }

    /// A batch out across two reloads that come back to its server spelt otherwise (`localhost`
    /// for `127.0.0.1`, a trailing slash) asked the owner the account has now: its calls and
    /// refusal hold here, not under the old spelling.
    func testABatchOutToAServerSpeltOtherwiseAfterTwoReloadsAskedTheOwnerNow() throws {
        let server = "http://127.0.0.1:8080"
        let quota = Quota(limits: [.day: 100])
        let account = QuotaAccount(provider: .openMeteo, url: server, quota: quota, file: nil, now: now, logger: logger)
        let batch = account.reserve(upTo: 2, callsPerPlace: 1, at: now)
        account.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        account.update(provider: .openMeteo, url: "http://localhost:8080/", quota: quota)
        XCTAssertTrue(account.isAsking(batch))
        let period = try XCTUnwrap(account.beginQuietPeriod(reason: daily, until: now + 3600, refusing: batch))
        XCTAssertEqual(period.until, now + 3600)
        XCTAssertEqual(account.quietPeriod?.until, now + 3600)
        account.settle(batch, spent: 2, at: now + 1)
        XCTAssertEqual(account.spent(inLast: 86_400, at: now + 2), 2)
    }
}
