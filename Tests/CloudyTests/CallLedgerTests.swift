import XCTest

@testable import Cloudy

/// The ledger of calls spent: sliding windows, fractional calls, room, and its compaction.
final class CallLedgerTests: XCTestCase {
    let openMeteoFree = Quota(limits: [.minute: 600, .hour: 5000, .day: 10000, .month: 300_000])

    func testRoomIsTheTightestWindowsInWholePlaces() {
        var ledger = CallLedger()
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: openMeteoFree, at: 0), 206)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: .unlimited, at: 0), Int.max)
        ledger.record(2.9 * 206, at: 0, keeping: QuotaWindow.month.seconds)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: openMeteoFree, at: 0), 0)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: openMeteoFree, at: 59.9), 0)
        XCTAssertEqual(ledger.nextRoom(callsPerPlace: 2.9, quota: openMeteoFree, after: 1), 60)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: openMeteoFree, at: 60), 206)
        XCTAssertEqual(ledger.spent(inLast: 3600, at: 60), 2.9 * 206, accuracy: 1e-9)
    }

    func testTheDayWindowHoldsOnceTheMinuteIsFree() {
        var ledger = CallLedger()
        for minute in 0..<17 { ledger.record(597.4, at: Double(minute) * 3600, keeping: 86400 * 30) }
        // 17 × 597.4 = 10,155.8 > 10,000 a day: the 18th hour's batch waits for the first to leave the day.
        let now = 17 * 3600.0
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: openMeteoFree, at: now), 0)
        XCTAssertEqual(ledger.nextRoom(callsPerPlace: 2.9, quota: openMeteoFree, after: now), 86400)
    }

    func testAPlaceDearerThanAWindowGoesAloneIntoAnEmptyWindow() {
        var ledger = CallLedger()
        let tiny = Quota(limits: [.minute: 2])
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: tiny, at: 0), 1)
        ledger.record(2.9, at: 0, keeping: 60)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 2.9, quota: tiny, at: 30), 0)
        XCTAssertEqual(ledger.nextRoom(callsPerPlace: 2.9, quota: tiny, after: 30), 60)
    }

    /// A batch settled with a time before the last entry's (the clock stepped back, or two
    /// feeds settled out of order): the entries move back with the clock, so the ledger stays in
    /// order and what was spent keeps its age; before that record, seen from the stepped-back
    /// clock, calls stamped up to a window ahead count as spent.
    func testAClockSteppedBackMovesTheLedgerWithIt() {
        var ledger = CallLedger()
        ledger.record(5, at: 1000, keeping: 86400)
        XCTAssertEqual(ledger.spent(inLast: 60, at: 990), 5, "ahead of the clock, within a window")
        XCTAssertEqual(ledger.spent(inLast: 60, at: 939), 0, "a window ahead: a clock far off")
        // An hour back: the batch of 1000 counts as just gone out at 3600 s earlier.
        ledger.record(3, at: 1000 - 3600, keeping: 86400)
        XCTAssertTrue(ledger.isValid)
        XCTAssertEqual(ledger.entries.map(\.time), [-2600, -2600])
        XCTAssertEqual(ledger.spent(inLast: 60, at: -2541), 8, "both count a minute from now")
        XCTAssertEqual(ledger.spent(inLast: 60, at: -2540), 0)
        XCTAssertEqual(ledger.affordablePlaces(callsPerPlace: 1, quota: Quota(limits: [.minute: 10]), at: -2600), 2)
    }

    func testOldSpendingIsMergedButNeverCountsShorter() {
        var ledger = CallLedger()
        // A batch every 30 s for 35 days, kept for a month.
        var time = 0.0
        while time < 35 * 86400 {
            ledger.record(1, at: time, keeping: QuotaWindow.month.seconds)
            time += 30
        }
        let now = time - 30
        // 240 exact, 46 h × 60 per minute, 28 days × 24 per hour.
        XCTAssertLessThanOrEqual(ledger.entries.count, 240 + 2760 + 28 * 24 + 2)
        XCTAssertEqual(ledger.spent(inLast: 60, at: now), 2, "exact for the minute")
        XCTAssertEqual(ledger.spent(inLast: 3600, at: now), 120, "and the hour")
        XCTAssertEqual(ledger.spent(inLast: 86400, at: now), 2880, accuracy: 2, "within a minute's batches for the day")
        XCTAssertGreaterThanOrEqual(ledger.spent(inLast: 86400, at: now), 2880, "never less")
        XCTAssertGreaterThanOrEqual(ledger.spent(inLast: QuotaWindow.month.seconds, at: now), 30 * 2880)
        XCTAssertLessThanOrEqual(ledger.spent(inLast: QuotaWindow.month.seconds, at: now), 30 * 2880 + 120)
    }
}
