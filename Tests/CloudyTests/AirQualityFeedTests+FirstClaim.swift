import XCTest

@testable import Cloudy

/// The forecast's first claim on the quota it shares with the air quality (`Feed.claimsQuotaFirst`).
extension AirQualityFeedTests {
    /// The forecast has the first claim on the quota both spend: an air-quality refresh whose
    /// timer fires first leaves the room the forecast's places need, so the forecast (and
    /// `/readyz`) is not held a minute for the air quality.
    func testTheForecastHasTheFirstClaimOnTheWindowBothSpend() throws {
        try answer()
        // 4 places: 11.6 calls of forecast, 6.4 of air quality; 90 % of 15 holds 13.5.
        _ = start(places: 4, limits: [.minute: 15, .hour: 10_000], weatherLast: true)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(isAirQuality), [true, false], "the air quality's timer fired first")
        XCTAssertEqual(rig.asked.first?.places, 1, "1.9 calls left beside the forecast's claim: one place")
        XCTAssertEqual(rig.asked.last?.places, 4, "every forecast place at once")
        XCTAssertEqual(rig.placesUp, 4)
        rig.clock.advance(by: 185)
        XCTAssertEqual(rig.asked.filter(isAirQuality).map(\.places).reduce(0, +), 4, "the air quality paced after it")
        for request in rig.asked {
            let inMinute = rig.asked.filter { $0.time > request.time - 60 && $0.time <= request.time }
            XCTAssertLessThanOrEqual(inMinute.map(weight).reduce(0, +), 13.5 + 1e-9, "up to \(request.time)")
        }
    }

    /// The claim covers a refresh's first batch, not a paced refresh's later ones: there each feed
    /// takes its turn, so a forecast paced over several windows does not keep the air quality out.
    func testAPacedForecastLeavesTheAirQualityItsTurn() throws {
        try answer()
        // 8 places: 23.2 calls of forecast, two windows' worth of the 13.5 pacing allows.
        _ = start(places: 8, limits: [.minute: 15, .hour: 10_000])
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(isAirQuality), [false, true], "the forecast's first batch, then the air quality")
        XCTAssertEqual(rig.asked.map(\.places), [4, 1])
        XCTAssertEqual(rig.placesUp, 4, "the forecast's other places wait for the next window")
        rig.clock.advance(by: 400)
        XCTAssertEqual(rig.placesUp, 8)
        XCTAssertEqual(rig.asked.filter(isAirQuality).map(\.places).reduce(0, +), 8)
    }

    /// Whether the weather's claim holds the air quality at `time`: it would wait for room that a
    /// feed with no claim to yield to has now.
    func claimHolds(at time: Double) -> Bool {
        let account = rig.refresher.account
        return account.nextRoom(callsPerPlace: 0.1, after: time, yielding: true)
            > account.nextRoom(callsPerPlace: 0.1, after: time)
    }

    /// A forecast refresh due while the hour is too full for its first batch keeps its claim
    /// until that batch goes: the air quality does not take the room that frees first.
    func testAForecastWaitingForRoomKeepsItsClaim() throws {
        try answer()
        _ = start(places: 4, limits: [.minute: 100, .hour: 15])
        rig.clock.advance(by: 0)  // the forecast's 11.6 calls and the air quality's 1.6 of the hour's 13.5
        XCTAssertFalse(claimHolds(at: rig.clock.now()))
        rig.clock.advance(by: 600)
        XCTAssertEqual(rig.asked.count, 2, "the hour has no room for the next refresh")
        XCTAssertTrue(claimHolds(at: rig.clock.now()))
    }

    /// A forecast refresh that waits for a quota refusal to lift claims the window it lifts into,
    /// from a minute before.
    func testAForecastWaitingForAQuietPeriodClaimsTheWindowItLiftsInto() throws {
        let refusal = Array(#"{"error":true,"reason":"Hourly API request limit exceeded."}"#.utf8)
        let airQuality = try TestPaths.fixtureBytes("open-meteo-air-quality.json")
        rig.answer { head in
            head.uri.hasPrefix("/v1/air-quality")
                ? .respond(status: .ok, headers: [], body: airQuality)
                : .respond(status: .tooManyRequests, headers: [], body: refusal)
        }
        _ = start(places: 1, limits: [.minute: 3.3])  // 2.97 a minute: one forecast place, and no more beside it
        rig.clock.advance(by: 0)
        let quiet = try XCTUnwrap(rig.refresher.quietPeriod)
        XCTAssertFalse(claimHolds(at: quiet.until - 90))
        XCTAssertTrue(claimHolds(at: quiet.until - 30))
    }

    /// The claim counts the places the refresh asks: not `city:` places still being looked up
    /// (they are asked beside the schedule once found) or that could not be located.
    func testTheClaimCountsOnlyThePlacesTheRefreshAsks() {
        var config = rig.config(cities: ["Springfield", "Shelbyville", "Ogdenville"], geocoder: "http://127.0.0.1:1")
        config.refresh.interval = 600
        rig.start(config, budget: CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1), starting: false)
        let now = rig.clock.now()
        let account = rig.refresher.account
        account.settle(places: 9, callsPerPlace: 1, spent: 9, at: now)  // the 90 % pacing allows: no room
        rig.refresher.start()
        rig.clock.advance(by: 0)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(rig.asked.count, 0, "the weather's batch waits for the minute")
        // When the minute frees, 1 call of the weather's one located place beside 6: they fit.
        XCTAssertEqual(account.nextRoom(callsPerPlace: 6, after: now + 61, yielding: true), now + 61)
    }
}
