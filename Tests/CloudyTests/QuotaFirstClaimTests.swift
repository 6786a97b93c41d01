import XCTest

@testable import Cloudy

/// The weather's refresh has the first claim on a quota it shares (`QuotaAccount.claimFirst`);
/// the feed-level case is in `AirQualityFeedTests`.
final class QuotaFirstClaimTests: XCTestCase {
    let (host, now) = ("https://api.open-meteo.com", 1_781_526_034.0)
    let logger = RecordedLog().logger

    /// The weather's claim counts as spent for a feed that yields to it, and for no other.
    func testAFeedThatYieldsCountsTheFirstClaimAsSpent() {
        let account = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.minute: 10]), file: nil, now: now, logger: logger)
        account.claimFirst(places: 8, callsPerPlace: 1)  // of the 9 calls pacing allows in the minute
        XCTAssertEqual(account.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 1)
        XCTAssertEqual(account.reserve(upTo: 8, callsPerPlace: 1, at: now).places, 8, "the claim's own feed")
        XCTAssertEqual(account.nextRoom(callsPerPlace: 1, after: now), now + 60)
        let fresh = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.minute: 10]), file: nil, now: now, logger: logger)
        fresh.claimFirst(places: 9, callsPerPlace: 1)
        XCTAssertEqual(fresh.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 0)
        XCTAssertGreaterThan(fresh.nextRoom(callsPerPlace: 1, after: now, yielding: true), now, "it waits")
        XCTAssertEqual(fresh.nextRoom(callsPerPlace: 1, after: now), now, "the claim's own feed does not")
        fresh.claimFirst(places: 0, callsPerPlace: 1)
        XCTAssertEqual(fresh.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 5, "claim given up")
    }

    /// A claim that fills what is left of the day holds a feed that yields until `claimRecheck`
    /// after the weather's first batch can go (here at once), not until the claim would leave
    /// the day's window: by then the weather has reserved its batch.
    func testAFeedThatYieldsLooksAgainSoon() {
        let account = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.day: 100]), file: nil, now: now - 1000,
            logger: logger)
        account.settle(places: 80, callsPerPlace: 1, spent: 80, at: now - 1000)
        account.claimFirst(places: 15, callsPerPlace: 1)  // 80 + 15 of the 90 pacing allows
        XCTAssertEqual(account.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 0)
        XCTAssertEqual(
            account.nextRoom(callsPerPlace: 1, after: now, yielding: true), now + QuotaAccount.claimRecheck)
        XCTAssertEqual(account.nextRoom(callsPerPlace: 1, after: now), now, "the claim's own feed")
        account.claimFirst(places: 0, callsPerPlace: 1)
        XCTAssertEqual(account.reserve(upTo: 5, callsPerPlace: 1, at: now + 60, yielding: true).places, 5)
    }

    /// A claim counts from a minute before the weather's refresh is due: a batch of another feed
    /// then, or just before, leaves it its room; before then the claim holds nothing.
    func testAClaimCountsFromWhenTheRefreshIsDue() {
        let account = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.minute: 10]), file: nil, now: now, logger: logger)
        account.claimFirst(places: 8, callsPerPlace: 1, from: now + 600)
        XCTAssertEqual(account.nextRoom(callsPerPlace: 1, after: now, yielding: true), now)
        XCTAssertEqual(account.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 5)
        account.settle(places: 5, callsPerPlace: 1, spent: 5, at: now + 1)
        XCTAssertEqual(account.nextRoom(callsPerPlace: 6, after: now + 100, yielding: true), now + 100)
        XCTAssertEqual(
            account.reserve(upTo: 5, callsPerPlace: 1, at: now + 545, yielding: true).places, 1, "a minute ahead")
    }

    /// While the weather's first batch cannot go for hours (its place costs more than the day
    /// has left), a feed that yields waits until it can, not 10 s at a time (each look renders
    /// the pages).
    func testAFeedThatYieldsWaitsForTheWeathersFirstBatchToGo() {
        let account = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.day: 100]), file: nil, now: now - 1000,
            logger: logger)
        account.settle(places: 88, callsPerPlace: 1, spent: 88, at: now - 1000)
        account.claimFirst(places: 4, callsPerPlace: 2.9)  // 2 of the 90 pacing allows are left
        XCTAssertEqual(account.reserve(upTo: 1, callsPerPlace: 2.9, at: now).places, 0, "the weather cannot go")
        XCTAssertEqual(account.nextRoom(callsPerPlace: 2.9, after: now), now - 1000 + 86_400)
        XCTAssertEqual(
            account.nextRoom(callsPerPlace: 1, after: now, yielding: true), now - 1000 + 86_400,
            "when the day's calls leave it, not 10 s on")
    }
}
