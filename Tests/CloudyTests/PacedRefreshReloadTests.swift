import Foundation
import XCTest

@testable import Cloudy

extension PacedRefreshTests {
    /// A reload that raises `provider.quota` while a paced refresh waits sends its next batch as
    /// soon as the new quota has room, not when the old one would have had it; one that lowers
    /// it waits longer.
    func testAReloadOfTheQuotaMovesThePacedRefreshsNextBatch() throws {
        var old = rig.config(places: 25, interval: 600)
        old.quota = QuotaSettings(stated: Quota(limits: [.minute: 10]))
        let cost = CallCost.perPlace(old)
        let firstBatch = Int((9 / cost).rounded(.down))
        XCTAssertGreaterThan(firstBatch, 0)
        rig.start(old)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [firstBatch])
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 61, accuracy: 1e-6, "a minute after, and a second")

        var lower = old
        lower.quota = QuotaSettings(stated: Quota(limits: [.hour: 10]))
        rig.reload(to: lower, from: old)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 3601, accuracy: 1e-6, "an hour after the first batch")
        XCTAssertTrue(rig.readyz.contains(QuietPeriod.utcTime(rig.clock.now() + 3601)), rig.readyz)

        var larger = old
        larger.quota = QuotaSettings(stated: Quota(limits: [.minute: 10_000]))
        rig.clock.advance(by: 10)
        rig.reload(to: larger, from: lower)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 0, accuracy: 1e-6, "the new quota has room now")
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [firstBatch, 25 - firstBatch])
        XCTAssertEqual(rig.placesUp, 25)
        XCTAssertEqual(rig.readyz, "ready")
        XCTAssertEqual(rig.log.entries(containing: "refresh finished").count, 1, "one refresh, not a second")
    }
}
