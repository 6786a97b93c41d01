import Foundation
import XCTest

@testable import Cloudy

extension QuietPeriodTests {
    /// A reload that only respells `provider.url` for the same server (`localhost` for
    /// `127.0.0.1`, a trailing slash) is no way around its `Retry-After`: endpoints.md's
    /// "unless a back-off wait or Retry-After is running" holds.
    func testAReloadThatRespellsTheURLKeepsTheRetryAfter() throws {
        rig.answer(status: .tooManyRequests, reason: "Too many concurrent requests", headers: [("Retry-After", "30")])
        let old = rig.config(places: 2, interval: 5)
        rig.start(old)
        rig.clock.advance(by: 0)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 30, accuracy: 1e-6)
        for spelling in [
            rig.server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"),
            rig.server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "LOCALHOST") + "/v1/../",
        ] {
            var new = old
            new.provider = ProviderSettings(url: spelling)
            rig.reload(to: new, from: old)
            rig.clock.advance(by: 1)
            XCTAssertEqual(rig.asked.count, 1, "\(spelling): the same server, its Retry-After still holds")
        }
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 28, accuracy: 1e-6)
        XCTAssertTrue(ProviderSettings.isSameServer("http://[::1]:8080", "http://localhost:8080"))
        XCTAssertFalse(ProviderSettings.isSameServer("http://127.0.0.1:8080", "http://127.0.0.1:8081"))
        XCTAssertFalse(ProviderSettings.isSameServer("https://mirror.example", "https://api.open-meteo.com"))
    }

    /// A reload to a mirror while a batch to the public host is out: that batch's calls and the
    /// day's refusal it brings back are the public host's, kept for a reload back; the mirror is
    /// asked at once, not held for a day by a quota it does not share.
    func testARefusalFromTheServerLeftDuringABatchHoldsOnlyThatServer() throws {
        let gate = ScriptedHTTPServer.ReleaseGate()
        let daily = Array(
            #"{"error":true,"reason":"Daily API request limit exceeded. Please try again tomorrow."}"#.utf8)
        rig.answer { _ in .held(gate, then: .respond(status: .tooManyRequests, headers: [], body: daily)) }
        let old = rig.config(places: 2, interval: 60)
        rig.start(old)
        let firstBatch = DispatchGroup()
        let clock = rig.clock
        DispatchQueue.global().async(group: firstBatch) { clock.advance(by: 0) }
        let deadline = Date().addingTimeInterval(10)
        while rig.asked.isEmpty, Date() < deadline { usleep(1000) }
        XCTAssertEqual(rig.asked.count, 1, "the batch is out")

        let mirror = try rig.mirror()
        defer { mirror.server.stop() }
        var new = old
        new.provider = ProviderSettings(url: mirror.server.baseURL)
        rig.store.replaceConfig(new)
        rig.refresher.apply(new, previous: old)  // while the batch is out
        gate.open()
        XCTAssertEqual(firstBatch.wait(timeout: .now() + 10), .success)
        rig.refresher.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertNil(rig.refresher.quietPeriod, "the mirror is not refused")
        XCTAssertEqual(mirror.asked.withLockedValue { $0 }, [2], "and asked at once")
        let said = rig.log.entries(containing: "a server a reload left refuses")
        XCTAssertEqual(said.count, 1, "said for the batch refused")
        XCTAssertEqual(said.first?.metadata["quota_owner"], "open-meteo \(old.provider.url)")
        XCTAssertEqual(
            said.first?.metadata["until"], "\(QuietPeriod.utcTime(QuietPeriod.lift(after: .day, now: rig.clock.now())))"
        )
        rig.store.render(now: rig.clock.now())
        XCTAssertEqual(rig.readyz, "ready")
        // A self-hosted mirror counts nothing; what the refused batch spent is the public host's.
        XCTAssertEqual(rig.refresher.account.spent(inLast: 86400, at: rig.clock.now()), 0)

        rig.reload(to: old, from: new)
        let refused = try XCTUnwrap(rig.refresher.quietPeriod, "the public host's refusal, kept for it")
        XCTAssertEqual(refused.until, QuietPeriod.lift(after: .day, now: rig.clock.now()))
        XCTAssertGreaterThan(rig.refresher.account.spent(inLast: 86400, at: rig.clock.now()), 0)
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.asked.count, 1, "not asked again today")
    }
}
