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
}
