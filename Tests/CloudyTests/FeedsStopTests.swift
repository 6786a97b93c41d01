import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// Shutdown stops every feed side by side: each feed's requests are cut short before any feed
/// waits for its refresh, and the feeds share one deadline, so more feeds than cores do not wait
/// once per wave (`Feeds.stop`).
final class FeedsStopTests: XCTestCase {
    /// A feed that notes, when it is stopped, whether every feed's client was cancelled by then
    /// and how long it was given.
    final class StoppedFeed: ScheduledFeed {
        let client = CurlHTTPClient(userAgent: "cloudy-tests")
        let everyClient: @Sendable () -> [CurlHTTPClient]
        let stops = NIOLockedValueBox<[(allCancelled: Bool, timeout: Double)]>([])

        init(everyClient: @escaping @Sendable () -> [CurlHTTPClient]) { self.everyClient = everyClient }
        func start() {}
        func apply(_ config: Config, previous: Config) {}
        func stop(timeout: Double) {
            let allCancelled = everyClient().allSatisfy(\.isCancelled)
            stops.withLockedValue { $0.append((allCancelled, timeout)) }
        }
    }

    func testEveryRequestIsCutShortBeforeAnyFeedWaitsAndTheWaitIsShared() {
        let clients = NIOLockedValueBox<[CurlHTTPClient]>([])
        let feeds = (0..<6).map { _ in StoppedFeed { clients.withLockedValue { $0 } } }
        clients.withLockedValue { $0 = feeds.map(\.client) }
        Feeds(feeds).stop(timeout: 1.5)
        let stops = feeds.flatMap { $0.stops.withLockedValue { $0 } }
        XCTAssertEqual(stops.count, 6, "each feed is stopped once")
        XCTAssertEqual(stops.filter(\.allCancelled).count, 6, "with every feed's requests cut short already")
        XCTAssertTrue(stops.allSatisfy { $0.timeout <= 1.5 && $0.timeout >= 0 }, "\(stops.map(\.timeout))")
    }
}
