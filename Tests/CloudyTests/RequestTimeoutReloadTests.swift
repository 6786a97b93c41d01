import Foundation
import XCTest

@testable import Cloudy

/// A reload that changes how the upstreams are asked (`refresh.timeout`, and for Open-Meteo
/// `refresh.parallel_requests`), not what, asks nothing sooner: the next request on the schedule
/// takes the new limit.
final class RequestTimeoutReloadTests: XCTestCase {
    func testANewTimeoutAsksNothingAgainAndLimitsTheNextRequest() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        let old = rig.config(places: 2, interval: 60)
        XCTAssertEqual(old.refresh.timeout, 5)
        rig.start(old)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)

        var new = old
        new.refresh.timeout = 0.3
        new.refresh.parallelRequests = 3
        rig.clock.advance(by: 20)
        rig.reload(to: new, from: old)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1, "nothing is asked again for it")
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 40, accuracy: 1e-6, "the schedule stays")

        rig.answer { _ in .hang }
        rig.clock.advance(by: 40)
        XCTAssertEqual(rig.asked.count, 2)
        try waitUntil("the hung request fails", timeout: 10) {
            rig.store.statuses.allSatisfy { $0.lastError != nil }
        }
        // libcurl says when it gave up: at the new limit, not the old 5 s.
        for reason in rig.store.statuses.compactMap(\.lastError) {
            let waited = reason.components(separatedBy: "timed out after ").dropFirst().first?
                .prefix { $0.isNumber }
            XCTAssertLessThan(try XCTUnwrap(waited.flatMap { Int($0) }, reason), 2500, reason)
        }
    }
}
