import XCTest

@testable import Cloudy

/// The warnings' lifecycle, on a `ManualClock`: what leaves at the next successful ask, what
/// leaves at its expiry though still listed, one series per warning across updates, and what a
/// failing source keeps until each warning's expiry or `stale_after`.
final class WarningBoardTests: XCTestCase {
    let clock = ManualClock()
    let staleAfter = 1800.0
    var board = WarningBoard()

    func warning(_ id: String, _ severity: WarningSeverity = .severe, expiresIn: Double? = 3600) -> WeatherWarning {
        WeatherWarning(
            id: id, source: "dwd", event: "Wind", severity: severity, headline: "Wind \(id)",
            onset: clock.now(), expires: expiresIn.map { clock.now() + $0 })
    }

    func ask(_ outcome: Result<[WeatherWarning], WeatherFetchError>) {
        board.record(place: "Berlin", source: "dwd", outcome, at: clock.now())
    }

    var inForce: [String] {
        board.inForce(place: "Berlin", sources: ["dwd"], now: clock.now(), staleAfter: staleAfter).map(\.id)
    }

    func testAWarningNoLongerListedLeavesAtTheNextSuccessfulAsk() {
        ask(.success([warning("a"), warning("b")]))
        XCTAssertEqual(inForce, ["a", "b"])
        clock.advance(by: 300)
        ask(.success([warning("b")]))
        XCTAssertEqual(inForce, ["b"], "a was cancelled")
        XCTAssertEqual(board.isUp(place: "Berlin", source: "dwd"), true)
    }

    func testAnUpdateUnderTheSameIdReplacesTheWarningNeverDoublesIt() {
        ask(.success([warning("a", .moderate)]))
        clock.advance(by: 300)
        ask(.success([warning("a", .moderate), warning("a", .extreme)]))
        let shown = board.inForce(place: "Berlin", sources: ["dwd"], now: clock.now(), staleAfter: staleAfter)
        XCTAssertEqual(shown.map(\.id), ["a"])
        XCTAssertEqual(shown.map(\.severity), [.extreme], "the later message wins")
    }

    func testAWarningLeavesAtItsExpiryWhileStillListedAndTheDeadlineSaysWhen() {
        ask(
            .success([
                warning("short", expiresIn: 600), warning("long", expiresIn: 7200), warning("open", expiresIn: nil),
            ]))
        XCTAssertEqual(board.nextDeadline(after: clock.now(), staleAfter: staleAfter), clock.now() + 600)
        clock.advance(by: 599)
        XCTAssertEqual(inForce, ["long", "open", "short"], "one severity and onset: by id")
        clock.advance(by: 1)
        XCTAssertFalse(inForce.contains("short"), "gone at its expiry, though the source still lists it")
        XCTAssertEqual(Set(inForce), ["long", "open"])
        XCTAssertEqual(
            board.nextDeadline(after: clock.now(), staleAfter: staleAfter), clock.now() + 1200,
            "next: the list going stale (30 min after the ask), before the long one's expiry")
    }

    func testAFailingSourceKeepsItsListUntilEachExpiryOrStaleAfterWhicheverFirst() {
        ask(.success([warning("soon", expiresIn: 900), warning("later", expiresIn: 7200)]))
        clock.advance(by: 300)
        ask(.failure(WeatherFetchError("dwd: HTTP 503")))
        XCTAssertEqual(board.isUp(place: "Berlin", source: "dwd"), false)
        XCTAssertEqual(Set(inForce), ["soon", "later"], "kept while the source is down")
        clock.advance(by: 600)
        XCTAssertEqual(inForce, ["later"], "soon expired")
        clock.advance(by: 899)
        XCTAssertEqual(inForce, ["later"])
        clock.advance(by: 1)
        XCTAssertEqual(inForce, [], "stale_after since the last success, before later's expiry")
        XCTAssertNil(board.nextDeadline(after: clock.now(), staleAfter: staleAfter))
        ask(.success([warning("later", expiresIn: 3600)]))
        XCTAssertEqual(inForce, ["later"], "back with the next success")
    }

    func testMostSevereFirstAndOnlyTheSourcesAskedAndPlacesForgotten() {
        ask(.success([warning("minor", .minor), warning("extreme", .extreme), warning("moderate", .moderate)]))
        XCTAssertEqual(inForce, ["extreme", "moderate", "minor"])
        XCTAssertEqual(board.inForce(place: "Berlin", sources: ["nws"], now: clock.now(), staleAfter: staleAfter), [])
        XCTAssertNil(board.isUp(place: "Berlin", source: "nws"), "never asked")
        board.keep(only: [(place: "Hamburg", source: "dwd")])
        XCTAssertEqual(inForce, [])
        XCTAssertNil(board.isUp(place: "Berlin", source: "dwd"))
    }
}
