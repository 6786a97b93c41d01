import Foundation
import XCTest

@testable import Cloudy

/// Fast recovery: a first refresh that cannot reach the provider (connection refused on a
/// closed port) is retried after 2, 4, 8, … seconds until the wait would reach the interval,
/// then backs off as usual; a place that already had weather waits the interval as before.
final class NetworkRetryTests: XCTestCase {
    var rig: RefresherRig!

    override func setUpWithError() throws {
        rig = try RefresherRig()
    }

    override func tearDown() {
        rig.stop()
    }

    func testAFirstRefreshWithoutNetworkIsRetriedSoonDoublingUpToTheIntervalThenNormally() throws {
        let port = rig.server.port
        let config = rig.config(places: 2, interval: 60)
        rig.server.stop()  // nothing listens there now: connection refused
        rig.start(config)
        rig.clock.advance(by: 0)
        var waits: [Double] = []
        for _ in 0..<7 {
            let wait = try XCTUnwrap(rig.nextRefreshIn)
            waits.append(wait)
            rig.clock.advance(by: wait)
        }
        // 2, 4, 8, 16, 32; 64 would reach the 60 s interval: then the back-off (×1 with the
        // jitter pinned), doubling.
        XCTAssertEqual(waits, [2, 4, 8, 16, 32, 60, 120])
        XCTAssertEqual(rig.store.telemetry.upstreamCount(provider: .openMeteo, code: "connect"), 8)
        XCTAssertEqual(rig.placesUp, 0)
        let failed = rig.log.entries(containing: "place refresh failed")
        XCTAssertEqual(failed.count, 3, "at the first failure and at each normal refresh, not at each fast retry")
        XCTAssertEqual(failed.map { "\($0.metadata["places"] ?? "")" }, ["2", "2", "2"], "both places on one line")

        // The network comes up (the server is back on its port): served at the next attempt.
        try rig.serve(port: port)
        rig.clock.advance(by: try XCTUnwrap(rig.nextRefreshIn))
        XCTAssertEqual(rig.placesUp, 2)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 60, accuracy: 1e-6)
    }

    func testTheNetworkComingUpServesWithinSecondsOfIt() throws {
        let port = rig.server.port
        let config = rig.config(places: 1, interval: 600)
        rig.server.stop()
        rig.start(config)
        rig.clock.advance(by: 0)
        rig.clock.advance(by: 5)  // failed at 0 and 2 s; the next try is at 6 s
        try rig.serve(port: port)
        rig.clock.advance(by: 0.9)
        XCTAssertEqual(rig.placesUp, 0)
        rig.clock.advance(by: 0.1)
        XCTAssertEqual(rig.placesUp, 1, "at 2 + 4 = 6 s, not after the 10-minute interval")
    }

    func testAPlaceThatHadWeatherWaitsTheIntervalAfterANetworkFailure() throws {
        rig.start(rig.config(places: 1, interval: 60))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.placesUp, 1)
        rig.server.stop()
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.placesUp, 0)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 60, accuracy: 1e-6, "the back-off, not a fast retry")
    }

    /// A `city:` place whose look-up cannot reach the geocoder yet is retried as fast as a
    /// place whose forecast could not be fetched, not after the geocoder's own back-off.
    func testACityWhoseLookUpHasNoNetworkIsRetriedSoon() throws {
        let fixture = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        let geocoding = try ScriptedHTTPServer { _ in .respond(status: .ok, headers: [], body: fixture) }
        let port = geocoding.port
        geocoding.stop()
        var config = rig.config(places: 1, interval: 600)
        config.geocodingURL = "http://127.0.0.1:\(port)"
        config.places.append(Place(name: "Springfield", city: CitySearch(query: "Springfield")))
        rig.start(config)
        rig.clock.advance(by: 0)
        rig.refresher.waitForQueuedWork()  // the look-up, on the geocoder's queue
        XCTAssertEqual(rig.placesUp, 1)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 2, accuracy: 1e-6, "the fast retry, for the city")
        XCTAssertEqual(rig.log.entries(containing: "no connection to the geocoder yet; retrying soon").count, 1)
        XCTAssertEqual(rig.log.entries(containing: "no connection to the provider yet").count, 0, "the provider is up")
        let back = try ScriptedHTTPServer(port: port) { _ in .respond(status: .ok, headers: [], body: fixture) }
        defer { back.stop() }
        rig.clock.advance(by: 2)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(rig.placesUp, 2, "located and fetched two seconds later")
        XCTAssertEqual(rig.asked.map(\.places), [1, 1], "only the city is asked in the retry")
    }

    /// A reload that only changes the interval keeps the fast retry armed.
    func testAReloadOfTheIntervalKeepsTheFastRetry() throws {
        let config = rig.config(places: 1, interval: 60)
        rig.server.stop()
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 2, accuracy: 1e-6)
        var longer = config
        longer.refresh.interval = 120
        rig.reload(to: longer, from: config)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 2, accuracy: 1e-6, "not the new interval")
    }

    /// A look-up that ends between two fast retries brings the next one forward for its place,
    /// but the waits still double 2 s, 4 s, 8 s, … (network down for the provider and the
    /// geocoder alike).
    func testLookUpsEndingDoNotHurryTheFastRetrysDoubling() throws {
        let geocoding = try ScriptedHTTPServer { _ in .hang }
        let geocodingPort = geocoding.port
        geocoding.stop()
        var config = rig.config(places: 1, interval: 600)
        config.geocodingURL = "http://127.0.0.1:\(geocodingPort)"
        config.places.append(Place(name: "Springfield", city: CitySearch(query: "Springfield")))
        rig.server.stop()
        rig.start(config)
        var waits: [Double] = []
        for _ in 0..<4 {
            rig.clock.advance(by: waits.last ?? 0)
            rig.refresher.waitForQueuedWork()  // the look-up, and the refresh it brings forward
            rig.clock.advance(by: 0)
            waits.append(try XCTUnwrap(rig.nextRefreshIn))
        }
        XCTAssertEqual(waits, [2, 4, 8, 16])
        XCTAssertEqual(rig.store.statuses.filter { $0.lastAttempt != nil }.count, 2, "both places say why")
    }
}
