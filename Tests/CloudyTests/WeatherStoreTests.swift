import Foundation
import XCTest

@testable import Cloudy

/// The store's rendered pages: two renders that overlap (a reload's on its thread, a paced
/// batch's on the refresh queue) never publish an older state over a newer one.
final class WeatherStoreTests: XCTestCase {
    func testARenderOfOlderStateNeverReplacesANewerOne() throws {
        let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
        let config = Config(places: [berlin])
        let store = WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics", now: 0,
            processMetrics: { MetricFamilies() })
        // The first render is held between building its pages and publishing them while the
        // state changes and a second render runs to the end: the interleaving of a reload's
        // render with a refresh's.
        let held = FirstTime()
        store.beforePublishing.withLockedValue { hook in
            hook = { [store] in
                guard held.take() else { return }
                store.record(
                    [(place: berlin, location: nil, outcome: .failure(WeatherFetchError("open-meteo: HTTP 503")))],
                    at: 1)
                store.render(now: 1)
            }
        }
        store.render(now: 1)
        XCTAssertTrue(
            store.rendered.readiness.answer.contains("open-meteo: HTTP 503"),
            "the newer state stays on the page: \(store.rendered.readiness.answer)")
        // A later render of the same state still publishes (stale series go on time).
        store.render(now: 2)
        XCTAssertTrue(store.rendered.readiness.answer.contains("open-meteo: HTTP 503"))
    }
}

/// True the first time only.
private final class FirstTime: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false

    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if taken { return false }
        taken = true
        return true
    }
}
