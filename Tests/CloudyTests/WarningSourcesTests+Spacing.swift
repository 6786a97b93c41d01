import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// MetAlerts' ten minutes per place, counted from each batch's start.
extension WarningSourcesTests {
    /// MetAlerts asks for one poll per ten minutes at most: an `Expires` a minute away (or one
    /// already past) does not bring the next request sooner; ten minutes on, less the
    /// tolerance for a timer's moment, it goes.
    func testMETNorwayAlertsAreAskedNoMoreThanEveryTenMinutes() throws {
        let expires = HTTPDate.format(Date(timeIntervalSince1970: clock.now() + 60))
        try answer(.ok, fixture: "met-norway-metalerts.json", headers: [("Expires", expires)])
        let source = METNorwayWarnings(upstream, logger: log.logger)
        XCTAssertNoThrow(try source.fetch([oslo], logger: log.logger)[0].get())
        clock.advance(by: 600 - FairUse.spacingTolerance - 0.001)
        XCTAssertNoThrow(try source.fetch([oslo], logger: log.logger)[0].get())
        XCTAssertEqual(requests.count, 1, "not before ten minutes, whatever Expires says")
        clock.advance(by: 0.001)
        XCTAssertNoThrow(try source.fetch([oslo], logger: log.logger)[0].get())
        XCTAssertEqual(requests.count, 2)
    }

    /// A place whose turn came late in one batch (behind slow answers) is asked in the next batch
    /// due ten minutes on, though its turn comes at once: every place counts from its batch's start.
    func testMETNorwayAlertsCountTheirTenMinutesFromTheBatchStart() throws {
        let body = try TestPaths.fixtureBytes("met-norway-metalerts.json")
        let clock = self.clock
        let slow = NIOLockedValueBox(true)
        let count = NIOLockedValueBox(0)
        let server = try ScriptedHTTPServer { _ in
            count.withLockedValue { $0 += 1 }
            if slow.withLockedValue({ $0 }) { clock.advance(by: 5) }  // no timers here: safe off the test's thread
            let expires = HTTPDate.format(Date(timeIntervalSince1970: clock.now() + 60))
            return .respond(
                status: .ok, headers: [("Content-Type", "application/json"), ("Expires", expires)], body: body)
        }
        addTeardownBlock { server.stop() }
        let source = METNorwayWarnings(
            Upstream(
                baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: Self.agent),
                recorder: telemetry, clock: clock),
            logger: log.logger)
        let places = ["Oslo", "Bergen", "Tromsø"].enumerated().map {
            Place(name: $0.element, latitude: 59.9 + Double($0.offset), longitude: 10.75)
        }
        let started = clock.now()
        _ = source.fetch(places, logger: log.logger)  // two at once: the third's turn comes 5 s on
        XCTAssertEqual(count.withLockedValue { $0 }, 3)
        slow.withLockedValue { $0 = false }
        clock.advance(by: started + 600 - FairUse.spacingTolerance - clock.now())
        _ = source.fetch(places, logger: log.logger)
        XCTAssertEqual(count.withLockedValue { $0 }, 6, "every place asked again")
    }
}
