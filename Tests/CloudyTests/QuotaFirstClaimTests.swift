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
        account.claimFirst(8)  // of the 9 calls pacing allows in the minute
        XCTAssertEqual(account.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 1)
        XCTAssertEqual(account.reserve(upTo: 8, callsPerPlace: 1, at: now).places, 8, "the claim's own feed")
        XCTAssertEqual(account.nextRoom(callsPerPlace: 1, after: now), now + 60)
        let fresh = QuotaAccount(
            provider: .openMeteo, url: host, quota: Quota(limits: [.minute: 10]), file: nil, now: now, logger: logger)
        fresh.claimFirst(9)
        XCTAssertEqual(fresh.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 0)
        XCTAssertGreaterThan(fresh.nextRoom(callsPerPlace: 1, after: now, yielding: true), now, "it waits")
        XCTAssertEqual(fresh.nextRoom(callsPerPlace: 1, after: now), now, "the claim's own feed does not")
        fresh.claimFirst(0)
        XCTAssertEqual(fresh.reserve(upTo: 5, callsPerPlace: 1, at: now, yielding: true).places, 5, "claim given up")
    }
}
