import XCTest

@testable import Cloudy

final class BackoffTests: XCTestCase {
    func testWaitsDoubleUpToTheBoundWithJitter() {
        var backoff = Backoff(interval: 10)
        XCTAssertEqual(backoff.nextRefresh(after: 1000), 1010, "no failures: the plain interval")
        var waits: [Double] = []
        for _ in 0..<6 {
            backoff.recordFailure(now: 1000, retryAfter: nil, jitter: 0.5)
            waits.append(backoff.nextRefresh(after: 1000) - 1000)
        }
        XCTAssertEqual(waits, [10, 20, 40, 60, 60, 60], "doubling up to max(4 × interval, 60 s)")
        backoff.recordFailure(now: 1000, retryAfter: nil, jitter: 0)
        XCTAssertEqual(backoff.nextRefresh(after: 1000) - 1000, 48, accuracy: 1e-9, "jitter takes up to 20 % off")
        backoff.recordFailure(now: 1000, retryAfter: nil, jitter: 1)
        XCTAssertEqual(backoff.nextRefresh(after: 1000) - 1000, 72, accuracy: 1e-9, "and adds up to 20 %")
        backoff.recordSuccess()
        XCTAssertEqual(backoff.nextRefresh(after: 1000), 1010)
    }

    /// The first wait is jittered both ways too (0.8 to 1.2 × the interval, metrics.md), not
    /// cut to the interval at the low end, where half the replicas that failed together would
    /// retry together.
    func testTheFirstWaitMayBeShorterThanTheInterval() {
        var backoff = Backoff(interval: 10)
        backoff.recordFailure(now: 1000, retryAfter: nil, jitter: 0)
        XCTAssertEqual(backoff.nextRefresh(after: 1000) - 1000, 8, accuracy: 1e-9)
    }

    func testRetryAfterIsNeverCutShort() {
        var backoff = Backoff(interval: 1)
        backoff.recordFailure(now: 1000, retryAfter: 30, jitter: 0.5)
        XCTAssertEqual(backoff.nextRefresh(after: 1000), 1030)
        var long = Backoff(interval: 600)
        long.recordFailure(now: 0, retryAfter: 5, jitter: 0.5)
        XCTAssertEqual(long.nextRefresh(after: 0), 600, "a short Retry-After does not hurry the schedule")
        XCTAssertEqual(long.bound, 2400)
    }

    /// A restart on the same server forgets the failures but keeps the server's `Retry-After`;
    /// one on another server keeps nothing; a quiet period's hold is the account's, not kept here.
    func testARestartKeepsOnlyTheSameServersRetryAfter() {
        var backoff = Backoff(interval: 60)
        backoff.recordFailure(now: 1000, retryAfter: 3600, jitter: 0.5)
        backoff.recordFailure(now: 4600, retryAfter: nil, jitter: 0.5)
        let same = backoff.restarted(.keepingRetryAfter, interval: 300)
        XCTAssertEqual(same.failures, 0)
        XCTAssertEqual(same.interval, 300)
        XCTAssertEqual(same.notBefore, 4600, "the wait the server asked for, not the back-off's")
        XCTAssertEqual(backoff.restarted(.afresh, interval: 300).notBefore, 0)
        var held = Backoff(interval: 60)
        held.hold(until: 9000)
        XCTAssertEqual(held.restarted(.keepingRetryAfter, interval: 60).notBefore, 0)
        held.hold(retryAfter: 120, now: 1000)
        XCTAssertEqual(held.restarted(.keepingRetryAfter, interval: 60).notBefore, 1120)
        held.recordSuccess()
        XCTAssertEqual(held.restarted(.keepingRetryAfter, interval: 60).notBefore, 0)
    }

    /// A new interval works the wait after the last failure out again, from that failure and
    /// with its jitter; a Retry-After and a hold (a quiet period) stay as they were.
    func testANewIntervalWorksTheWaitOutAgain() {
        var backoff = Backoff(interval: 86400)
        backoff.recordFailure(now: 1000, retryAfter: nil, jitter: 0)
        XCTAssertEqual(backoff.notBefore, 1000 + 0.8 * 86400)
        backoff.interval = 300
        XCTAssertEqual(backoff.notBefore, 1000 + 0.8 * 300)
        backoff.recordFailure(now: 2000, retryAfter: nil, jitter: 0)
        backoff.interval = 600
        XCTAssertEqual(backoff.notBefore, 2000 + 0.8 * 1200, "the second failure's doubled wait")
        var asked = Backoff(interval: 86400)
        asked.recordFailure(now: 0, retryAfter: 7200, jitter: 0.5)
        asked.hold(until: 9000)
        asked.interval = 60
        XCTAssertEqual(asked.notBefore, 9000, "the hold, longer than the Retry-After")
        asked.recordFailure(now: 9000, retryAfter: nil, jitter: 0.5)
        XCTAssertEqual(asked.notBefore, 9000 + 120, "a failure's wait replaces a hold that ended")
        var none = Backoff(interval: 60)
        none.interval = 300
        XCTAssertEqual(none.notBefore, 0, "no failure: nothing to wait for")
    }

    func testRetryAfterHeaderForms() {
        let now = HTTPDate.parse("Mon, 15 Jun 2026 12:00:00 GMT")!
        XCTAssertEqual(RetryAfter.seconds("120", now: now), 120)
        XCTAssertEqual(RetryAfter.seconds("Mon, 15 Jun 2026 12:00:30 GMT", now: now), 30)
        XCTAssertEqual(RetryAfter.seconds("Mon, 15 Jun 2026 11:00:00 GMT", now: now), 0)
        XCTAssertNil(RetryAfter.seconds("soon", now: now))
        XCTAssertNil(RetryAfter.seconds("-5", now: now))
        // More seconds than 64 bits hold is still a wait: the longest honoured, a day.
        let huge = try? XCTUnwrap(RetryAfter.seconds("99999999999999999999999", now: now))
        var held = Backoff(interval: 60)
        held.recordFailure(now: 0, retryAfter: huge, jitter: 0.5)
        XCTAssertEqual(held.nextRefresh(after: 0), 86400)
        // Untrusted headers: out-of-range fields are no date, and no overflow.
        XCTAssertNil(RetryAfter.seconds("Mon, 15 Jun 2026 9999999999999999:00:00 GMT", now: now))
        XCTAssertNil(RetryAfter.seconds("Mon, 15 Jun 9223372036854775807 12:00:00 GMT", now: now))
        XCTAssertNil(HTTPDate.parse("Mon, 32 Jun 2026 12:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Mon, 15 Jun 2026 12:60:00 GMT"))
        XCTAssertEqual(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT")?.timeIntervalSince1970, 253_402_300_800)
        XCTAssertEqual(HTTPDate.format(now), "Mon, 15 Jun 2026 12:00:00 GMT")
    }
}
