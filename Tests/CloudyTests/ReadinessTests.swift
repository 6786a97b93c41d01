import XCTest

@testable import Cloudy

/// What `/readyz` and the cards of `/` say while the provider's quota holds requests back: each
/// place names the reason and when it lifts, once, whatever else it says.
final class ReadinessTests: XCTestCase {
    let quiet = QuietPeriod(
        provider: .openMeteo, reason: "open-meteo: HTTP 429: Daily API request limit exceeded.",
        until: 1_781_568_060)
    let snapshot = WeatherSnapshot(current: CurrentConditions(observedAt: 1_781_524_800))
    var quietText: String {
        "no requests to open-meteo until 2026-06-16 00:01:00 UTC: open-meteo: HTTP 429: Daily API request limit exceeded."
    }

    func status(_ name: String, up: Bool, error: String? = nil, attempted: Bool = true) -> PlaceStatus {
        var status = PlaceStatus(
            place: Place(name: name, latitude: 52.52, longitude: 13.41), snapshot: up ? snapshot : nil,
            lastSuccess: up ? 1_781_524_800 : nil, lastAttempt: attempted ? 1_781_524_800 : nil, lastError: error)
        status.quietPeriod = quiet
        return status
    }

    func testEveryPlaceNamesTheQuietPeriodOnce() {
        let readiness = Readiness([
            status("Berlin", up: true),
            status("Oslo", up: true, error: quietText),
            status("Lima", up: true, error: "open-meteo: HTTP 503"),
        ])
        XCTAssertEqual(
            readiness.answer,
            """
            ready
            failing: Oslo: \(quietText)
            failing: Lima: open-meteo: HTTP 503; \(quietText)
            quiet: Berlin: \(quietText)
            """)
    }

    func testNotReadyNamesItToo() {
        XCTAssertEqual(
            Readiness([status("Berlin", up: false, attempted: false)]).answer,
            "not ready: waiting for the first refresh of 1 of 1 places; \(quietText)")
        XCTAssertEqual(
            Readiness([status("Berlin", up: false, error: quietText)]).answer,
            "not ready: no place has been refreshed successfully yet: \(quietText)")
    }

    /// `/readyz` is a line per item whatever line breaks an upstream's reason holds: "\r\n" is one
    /// Character, neither "\r" nor "\n", and stayed a line break. What a terminal acts on (ESC,
    /// NUL) or hides (a direction override) is left out.
    func testAnUpstreamReasonStaysOnItsLine() {
        let reason = "open-meteo: HTTP 500: a\r\nb\rc\nd\u{2028}e\u{1B}[2J\u{0}f\u{202E}g\th"
        var failing = status("Berlin", up: false, error: reason)
        var ready = status("Lima", up: true)
        (failing.quietPeriod, ready.quietPeriod) = (nil, nil)
        XCTAssertEqual(
            Readiness([ready, failing]).answer, "ready\nfailing: Berlin: open-meteo: HTTP 500: a b c d e[2Jfg h")
    }

    func testCardsSayItWhateverTheirState() {
        func detail(_ status: PlaceStatus) -> String? {
            StatusViewModel(status: status, units: UnitSettings(), now: 1_781_524_900, staleAfter: 1800).stateDetail
        }
        XCTAssertEqual(detail(status("Berlin", up: true)), quietText, "up, with its weather, and why no refresh comes")
        XCTAssertEqual(detail(status("Oslo", up: true, error: quietText)), quietText)
        XCTAssertEqual(
            detail(status("Lima", up: false, attempted: false)), "waiting for the first refresh; " + quietText)
        var lifted = status("Berlin", up: true)
        lifted.quietPeriod = nil
        XCTAssertNil(detail(lifted), "nothing more once it has lifted")
    }
}

extension ReadinessTests {
    /// Once ready, a place a reload adds waits on a line of its own; readiness goes only when no
    /// place has weather (every place replaced), as at the start.
    func testAPlaceAddedToAReadyExporterWaitsWithoutTakingReadiness() {
        var added = status("Lima", up: false, attempted: false)
        added.quietPeriod = nil
        let statuses = [status("Berlin", up: true), added]
        XCTAssertEqual(
            Readiness(statuses, wasReady: true).answer,
            "ready\nquiet: Berlin: \(quietText)\nwaiting: Lima: waiting for the first refresh")
        XCTAssertEqual(
            Readiness(statuses).answer, "not ready: waiting for the first refresh of 1 of 2 places; \(quietText)",
            "at the start, every place's first refresh counts")
        XCTAssertEqual(
            Readiness([added], wasReady: true).answer, "not ready: waiting for the first refresh of 1 of 1 places")
        XCTAssertEqual(
            Readiness([status("Berlin", up: true), status("Lima", up: false, attempted: false)], wasReady: true).answer,
            "ready\nquiet: Berlin: \(quietText)\nwaiting: Lima: waiting for the first refresh; \(quietText)",
            "a place not asked yet is waiting, not quiet")
    }
}

/// The same through a refresher: a place added while the provider's `Retry-After` holds every
/// request back leaves `/readyz` at 200 for the ten minutes it waits.
final class ReadinessAfterReloadTests: XCTestCase {
    func testAReloadDuringABackOffKeepsTheExporterReady() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        rig.answerForecasts()
        let config = rig.config(places: 2)
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.readyz, "ready")
        rig.answer(status: .serviceUnavailable, reason: "down", headers: [("Retry-After", "600")])
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.asked.count, 2)
        let more = rig.config(places: 3)
        rig.reload(to: more, from: config)
        XCTAssertEqual(rig.asked.count, 2, "Retry-After holds the new place back too")
        XCTAssertTrue(rig.readyz.hasPrefix("ready\n"), rig.readyz)
        XCTAssertTrue(rig.readyz.hasSuffix("\nwaiting: Place 2: waiting for the first refresh"), rig.readyz)
        rig.answerForecasts()
        rig.clock.advance(by: 600)
        XCTAssertEqual(rig.placesUp, 3)
        XCTAssertEqual(rig.readyz, "ready")
    }
}
