import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// Dark Sky's (Pirate Weather's) spent month: a 429 with `RateLimit-Remaining: 0` holds every
/// refresh until the key's month starts afresh.
extension QuietPeriodTests {
    /// Dark Sky's gateway says the month is spent (`RateLimit-Remaining: 0`, no `Retry-After`):
    /// nothing goes to it at the refreshes before the UTC month turns, and it is asked then.
    func testDarkSkysSpentMonthHoldsEveryRefreshUntilTheMonthTurns() throws {
        let start = rig.clock.now()
        let limited = Array(#"{"message":"API rate limit exceeded"}"#.utf8)
        rig.answer { _ in .respond(status: .tooManyRequests, headers: [("RateLimit-Remaining", "0")], body: limited) }
        var config = rig.config(places: 1, interval: 60)
        config.provider = ProviderSettings(name: .darkSky, url: rig.server.baseURL, apiKey: Secret("ds-key"))
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)
        let lift = QuietPeriod.lift(after: .month, now: start)
        XCTAssertEqual(lift, try utc("2026-07-01T00:01:00Z"))
        XCTAssertTrue(rig.readyz.contains("no requests to dark-sky until \(QuietPeriod.utcTime(lift))"), rig.readyz)
        for _ in 0..<3 { rig.clock.advance(by: 60) }
        rig.clock.advance(by: lift - start - 180 - 0.5)
        XCTAssertEqual(rig.asked.count, 1, "nothing is sent in the rest of the month")
        rig.clock.advance(by: 0.5)
        XCTAssertEqual(rig.asked.count, 2, "asked again once the month turns")
        XCTAssertEqual(rig.log.entries(containing: "refuses requests for its quota").count, 2)
    }

    /// `RateLimit-Reset` counts to the key's own monthly reset (a key's month starts on the day
    /// it was made): the quiet period ends a minute after it, sooner or later than the UTC
    /// month's turn, and a reset past any month is held to 31 days.
    func testDarkSkysSpentMonthEndsWhenRateLimitResetSays() throws {
        let start = rig.clock.now()
        let reset = NIOLockedValueBox(5 * 86_400)
        let limited = Array(#"{"message":"API rate limit exceeded"}"#.utf8)
        rig.answer { _ in
            .respond(
                status: .tooManyRequests,
                headers: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "\(reset.withLockedValue { $0 })")],
                body: limited)
        }
        var config = rig.config(places: 1, interval: 60)
        config.provider = ProviderSettings(name: .darkSky, url: rig.server.baseURL, apiKey: Secret("ds-key"))
        rig.start(config)
        rig.clock.advance(by: 0)
        let lift = start + 5 * 86_400 + QuietPeriod.resetMargin
        XCTAssertLessThan(lift, QuietPeriod.lift(after: .month, now: start), "before the UTC month turns")
        XCTAssertTrue(rig.readyz.contains("no requests to dark-sky until \(QuietPeriod.utcTime(lift))"), rig.readyz)
        rig.clock.advance(by: lift - start - 0.5)
        XCTAssertEqual(rig.asked.count, 1, "nothing is sent before the key's month starts afresh")
        reset.withLockedValue { $0 = 25 * 86_400 }
        rig.clock.advance(by: 0.5)
        XCTAssertEqual(rig.asked.count, 2, "asked again then, and refused for 25 more days")
        let monthTurn = QuietPeriod.lift(after: .month, now: lift)
        let later = lift + 25 * 86_400 + QuietPeriod.resetMargin
        XCTAssertGreaterThan(later, monthTurn)
        rig.clock.advance(by: monthTurn - lift)
        XCTAssertEqual(rig.asked.count, 2, "not asked when the UTC month turns")
        reset.withLockedValue { $0 = 90 * 86_400 }
        rig.clock.advance(by: later - monthTurn)
        XCTAssertEqual(rig.asked.count, 3)
        XCTAssertTrue(
            rig.readyz.contains("until \(QuietPeriod.utcTime(later + 31 * 86_400 + QuietPeriod.resetMargin))"),
            "held to 31 days: \(rig.readyz)")
    }
}
