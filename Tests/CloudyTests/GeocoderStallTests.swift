import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// A geocoder that does not answer holds up only the `city:` places waiting for it: the other
/// places are asked on their schedule meanwhile, and a place is asked as soon as its look-up is
/// over. Against a scripted geocoder on 127.0.0.1 whose answers a gate holds back, with the
/// refresher on a `ManualClock` (`RefresherRig`).
final class GeocoderStallTests: XCTestCase {
    var rig: RefresherRig!
    var geocoder: ScriptedHTTPServer!
    let gate = ScriptedHTTPServer.ReleaseGate()
    let searches = NIOLockedValueBox(0)

    override func setUpWithError() throws {
        rig = try RefresherRig()
        let fixture = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        let gate = self.gate
        let searches = self.searches
        geocoder = try ScriptedHTTPServer { _ in
            searches.withLockedValue { $0 += 1 }
            return .held(gate, then: .respond(status: .ok, headers: [], body: fixture))
        }
    }

    override func tearDown() {
        gate.open()
        rig.stop()
        geocoder.stop()
    }

    func config(cities: [String]) -> Config {
        rig.config(cities: cities, geocoder: geocoder.baseURL)
    }

    /// Waits (polling, with a deadline) until the geocoder has been asked `count` times.
    func waitForSearches(_ count: Int, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while searches.withLockedValue({ $0 }) < count, Date() < deadline { usleep(1000) }
        XCTAssertEqual(
            searches.withLockedValue { $0 }, count, "look-ups that reached the geocoder", file: file, line: line)
    }

    func testAHangingLookUpHoldsUpNoOtherPlaceAndItsPlaceIsAskedOnceFound() throws {
        rig.start(config(cities: ["Springfield", "Shelbyville", "Capital City"]))
        rig.clock.advance(by: 0)
        rig.refresher.feed.waitForQueuedWork()
        XCTAssertEqual(rig.placesUp, 1, "the place with coordinates is served while the look-ups hang")
        XCTAssertEqual(rig.asked.map(\.places), [1])
        waitForSearches(3)  // the look-ups in flight together, not one after the other
        XCTAssertEqual(rig.readyz, "not ready: waiting for the first refresh of 3 of 4 places")

        rig.clock.advance(by: 60)
        rig.refresher.feed.waitForQueuedWork()
        XCTAssertEqual(rig.asked.map(\.places), [1, 1], "the next refresh on time, the look-ups still hanging")
        XCTAssertEqual(searches.withLockedValue { $0 }, 3, "a look-up under way is not begun again")

        gate.open()
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(rig.placesUp, 4, "found and asked at once, not at the next refresh")
        XCTAssertEqual(rig.readyz, "ready")
        XCTAssertEqual(rig.asked.map(\.places).reduce(0, +), 5)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 60, accuracy: 1e-6, "the schedule stays the same")
    }

    /// A look-up is one upstream request like the others: it gives up after `refresh.timeout`.
    func testALookUpGivesUpAfterTheRefreshTimeout() throws {
        var config = config(cities: ["Springfield"])
        config.refresh.timeout = 0.3
        rig.start(config)
        rig.clock.advance(by: 0)
        rig.refresher.waitForQueuedWork()
        let failed = try XCTUnwrap(rig.log.entries(containing: "city look-up failed").first)
        let reason = "\(failed.metadata["reason"] ?? "")"
        let waited = reason.firstMatch(of: /after (\d+) milliseconds/).flatMap { Int($0.1) }
        XCTAssertLessThan(try XCTUnwrap(waited, reason), 1000, reason)
        XCTAssertTrue(rig.readyz.contains("Springfield: geocoding Springfield: "), rig.readyz)
    }

    /// A place found while a fast network retry is armed for the others is asked at once, not
    /// when that retry falls due; the retry stays as it was armed.
    func testAPlaceFoundWhileAFastRetryIsArmedIsAskedAtOnce() throws {
        let port = rig.server.port
        let config = config(cities: ["Springfield"])
        rig.server.stop()  // the provider cannot be reached yet
        rig.start(config)
        rig.clock.advance(by: 0)
        rig.refresher.feed.waitForQueuedWork()
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 2, accuracy: 1e-6, "the fast retry, for Place 0")
        func attempted(_ name: String) -> Bool {
            rig.store.statuses.first { $0.place.name == name }?.lastAttempt != nil
        }
        XCTAssertFalse(attempted("Springfield"), "still being looked up")
        try rig.serve(port: port)
        gate.open()
        rig.refresher.waitForQueuedWork()
        rig.clock.advance(by: 0)  // what is armed for now runs; time does not move
        XCTAssertTrue(attempted("Springfield"), "asked once found, not at the retry two seconds on")
        XCTAssertEqual(rig.placesUp, 1)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 2, accuracy: 1e-6, "Place 0's retry, kept")
        rig.clock.advance(by: 2)
        XCTAssertEqual(rig.placesUp, 2)
    }

    /// A `Retry-After` the provider sends for a place just found holds the schedule back, as
    /// for any other refresh.
    func testARetryAfterForAFoundPlaceHoldsTheNextRefresh() throws {
        rig.start(config(cities: ["Springfield"]))
        rig.clock.advance(by: 0)
        rig.refresher.feed.waitForQueuedWork()
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 60, accuracy: 1e-6)
        rig.answer(status: .tooManyRequests, reason: "Too many concurrent requests", headers: [("Retry-After", "300")])
        gate.open()
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(rig.asked.map(\.places), [1, 1], "Springfield asked once found")
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 300, accuracy: 1e-6, "not the 60 s armed before")
    }

    /// Look-ups that end together are asked in one refresh, not one request per place.
    func testLookUpsThatEndTogetherAreAskedTogether() throws {
        rig.start(config(cities: ["Springfield", "Shelbyville", "Capital City"]))
        rig.clock.advance(by: 0)
        rig.refresher.feed.waitForQueuedWork()
        waitForSearches(3)
        // The feed is busy (as in a refresh) while the three answers come back.
        let busy = DispatchSemaphore(value: 0)
        rig.refresher.feed.queue.async { busy.wait() }
        gate.open()
        rig.refresher.geocoder.waitForLookUps()
        busy.signal()
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(rig.asked.map(\.places), [1, 3])
        XCTAssertEqual(rig.placesUp, 4)
    }
}
