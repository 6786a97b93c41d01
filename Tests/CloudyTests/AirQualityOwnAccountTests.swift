import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// The air quality on a server of its own, with a quota account of its own: what it counts, and
/// what a reload away and back keeps.
extension AirQualityFeedTests {
    /// An account of its own that a reload left keeps its refusal for a reload back: the server
    /// that refused is not asked again before the refusal lifts.
    func testAReloadBackToTheServerOfItsOwnFindsItsRefusal() throws {
        let asked = NIOLockedValueBox(0)
        let (own, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(true), asked: asked)
        defer { own.stop() }
        let feed = try XCTUnwrap(airQuality)
        let refused = try XCTUnwrap(feed.account.quietPeriod)
        XCTAssertEqual(asked.withLockedValue { $0 }, 1)
        let (mirror, _) = try rig.mirror()
        defer { mirror.stop() }
        var moved = config
        moved.airQuality = AirQualitySettings(url: mirror.baseURL)
        feed.apply(moved, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertNil(feed.account.quietPeriod, "the mirror refused nothing")
        feed.apply(config, previous: moved)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 60)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(feed.account.quietPeriod?.until, refused.until, "the refusal it left is found")
        XCTAssertEqual(asked.withLockedValue { $0 }, 1, "and the server is not asked before it lifts")
        rig.store.render(now: rig.clock.now())
        XCTAssertEqual(
            rig.store.renderedSamples[Self.refusedUntil + #"{provider="open-meteo-air-quality"}"#], refused.until)
    }

    /// The calls of an air quality on a quota of its own are counted under its own name, not
    /// the forecast provider's, whose quota they do not spend.
    func testCallsOnAQuotaOfItsOwnAreCountedUnderItsOwnName() throws {
        let (own, _) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(false))
        defer { own.stop() }
        rig.store.render(now: rig.clock.now())
        let calls = "cloudy_exporter_upstream_calls_total"
        XCTAssertEqual(rig.store.renderedSamples[calls + #"{provider="open-meteo-air-quality"}"#], 1.6)
        XCTAssertEqual(rig.store.renderedSamples[calls + #"{provider="open-meteo"}"#], 2.9, "the forecast's alone")
    }
}
