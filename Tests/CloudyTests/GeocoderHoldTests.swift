import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// A geocoder that asks Cloudy to wait (429 with `Retry-After`) holds every look-up back for
/// that long and no longer: the places held back, a `city:` place a reload adds meanwhile
/// included, are looked up and asked when the wait is over, not at their feeds' next refresh
/// or the failed look-up's back-off. Against a scripted geocoder on 127.0.0.1, the refresher on
/// a `ManualClock` (`RefresherRig`).
final class GeocoderHoldTests: XCTestCase {
    var rig: RefresherRig!
    var geocoder: ScriptedHTTPServer!
    let searches = NIOLockedValueBox(0)

    override func setUpWithError() throws {
        rig = try RefresherRig()
        let fixture = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        let searches = self.searches
        geocoder = try ScriptedHTTPServer { _ in
            let first = searches.withLockedValue { count in
                count += 1
                return count == 1
            }
            return first
                ? .respond(status: .tooManyRequests, headers: [("Retry-After", "5")], body: [])
                : .respond(status: .ok, headers: [], body: fixture)
        }
    }

    override func tearDown() {
        rig.stop()
        geocoder.stop()
    }

    func config(cities: [String]) -> Config {
        rig.config(cities: cities, geocoder: geocoder.baseURL)
    }

    func testPlacesHeldBackAreLookedUpAndAskedWhenTheGeocodersWaitIsOver() throws {
        let first = config(cities: ["Springfield"])
        rig.start(first)
        rig.clock.advance(by: 0)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(searches.withLockedValue { $0 }, 1)
        XCTAssertEqual(rig.placesUp, 1)

        rig.clock.advance(by: 1)
        let second = config(cities: ["Springfield", "Shelbyville"])
        rig.reload(to: second, from: first)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(searches.withLockedValue { $0 }, 1, "not asked while the geocoder's wait runs")
        XCTAssertTrue(rig.readyz.contains("Shelbyville: geocoding Springfield: not asked"), rig.readyz)

        rig.clock.advance(by: 3.9)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(searches.withLockedValue { $0 }, 1)
        rig.clock.advance(by: 0.1)
        // The feeds hear of the wait's end on their queues, then begin the look-ups.
        let deadline = Date().addingTimeInterval(10)
        while searches.withLockedValue({ $0 }) < 3, Date() < deadline { usleep(1000) }
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(searches.withLockedValue { $0 }, 3, "both looked up at the end of the 5 s")
        XCTAssertEqual(rig.placesUp, 3, "and asked at once")
        XCTAssertEqual(rig.readyz, "ready")
    }
}
