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
}
