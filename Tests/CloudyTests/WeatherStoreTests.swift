import Foundation
import XCTest

@testable import Cloudy

/// The store's rendered pages: two renders that overlap (a reload's on its thread, a paced
/// batch's on the refresh queue) never publish an older state over a newer one.
final class WeatherStoreTests: XCTestCase {
    func testARenderOfOlderStateNeverReplacesANewerOne() throws {
        let berlin = Self.berlin
        let store = Self.store()
        // The first render is held between building its pages and publishing them while the
        // state changes and a second render runs to the end: the interleaving of a reload's
        // render with a refresh's.
        held(store) {
            store.record(
                [(place: berlin, location: nil, outcome: .failure(WeatherFetchError("open-meteo: HTTP 503")))], at: 1)
            store.render(now: 1)
        }
        store.render(now: 1)
        XCTAssertTrue(
            store.rendered.readiness.answer.contains("open-meteo: HTTP 503"),
            "the newer state stays on the page: \(store.rendered.readiness.answer)")
        // A later render of the same state still publishes (stale series go on time).
        store.render(now: 2)
        XCTAssertTrue(store.rendered.readiness.answer.contains("open-meteo: HTTP 503"))
        XCTAssertEqual(store.state.withLockedValue { $0.renderedAt }, 2)
    }

    /// A render asked for with a time before one already asked for (a reload takes its time
    /// before it reads the config) renders at the later time: series gone stale stay gone.
    func testARenderNeverShowsAnEarlierTime() {
        let berlin = Self.berlin
        let store = Self.store(staleAfter: 1800)
        let snapshot = WeatherSnapshot(current: CurrentConditions(temperatureCelsius: 3))
        store.record([(place: berlin, location: nil, outcome: .success(snapshot))], at: 100)
        let temperature = #"weather_temperature_celsius{location="Berlin"}"#
        store.render(now: 1800)
        XCTAssertEqual(store.renderedSamples[temperature], 3)
        store.render(now: 1901)
        XCTAssertNil(store.renderedSamples[temperature], "stale from 1900")
        store.render(now: 1850)
        XCTAssertNil(store.renderedSamples[temperature], "still stale")
        XCTAssertNil(store.nextStaleDeadline(), "its deadline is behind the page")
    }

    /// A refused reload is on the page as soon as the reload has rendered, even when a refresh's
    /// render read the telemetry before the refusal, took a later time, and publishes last (a
    /// race `ThresholdsEndToEndTests` met on a busy machine).
    func testARefusedReloadIsNotHiddenByARenderThatReadTheTelemetryBefore() throws {
        let store = Self.store()
        held(store) {
            store.telemetry.recordReload(successful: false, at: 50)
            store.render(now: 50)
        }
        store.render(now: 60)  // the refresh's: it reads the telemetry first and publishes last
        XCTAssertEqual(store.renderedSamples["cloudy_exporter_config_last_reload_successful"], 0, "the refusal stays")
    }

    /// A counter on the page never goes back, which Prometheus would take for a reset (and
    /// count the whole counter again in `rate`): a render that read it before a newer render
    /// published is not published after it.
    func testACounterNeverGoesBackWhenRendersOverlap() throws {
        let store = Self.store()
        let requests = #"cloudy_exporter_upstream_requests_total{provider="open-meteo",code="200"}"#
        store.telemetry.recordUpstream(provider: "open-meteo", code: "200")
        held(store) {
            store.telemetry.recordUpstream(provider: "open-meteo", code: "200")
            store.render(now: 10)  // another feed's render, after the second request
        }
        store.render(now: 10)  // read one request, published last
        XCTAssertEqual(store.renderedSamples[requests], 2)
        store.render(now: 10)
        XCTAssertEqual(store.renderedSamples[requests], 2, "and the next render shows the same")
    }

    static let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    /// A store of Berlin alone, its weather stale `staleAfter` seconds after its last answer.
    static func store(staleAfter: Double = Config(places: []).refresh.staleAfter) -> WeatherStore {
        var config = Config(places: [berlin])
        config.refresh.staleAfter = staleAfter
        return WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics", now: 0,
            processMetrics: { MetricFamilies() })
    }

    /// Holds the next render between building its pages and publishing them while `meanwhile`
    /// runs (the interleaving of two renders on two threads, made deterministic).
    func held(_ store: WeatherStore, meanwhile: @escaping @Sendable () -> Void) {
        let first = FirstTime()
        store.beforePublishing.withLockedValue { hook in
            hook = {
                guard first.take() else { return }
                meanwhile()
            }
        }
    }

    /// An alert carried in the weather answer leaves the page at its expiry: the weather feed's
    /// re-render timer is armed for it, not only for the weather going stale.
    func testACarriedAlertsExpiryIsWhenTheWeathersPageChangesNext() {
        let berlin = Self.berlin
        let store = Self.store(staleAfter: 1800)
        let storm = WeatherWarning(id: "a", source: "dark-sky", event: "Storm", severity: .severe, expires: 600)
        let snapshot = WeatherSnapshot(current: CurrentConditions(temperatureCelsius: 3), warnings: [storm])
        store.record([(place: berlin, location: nil, outcome: .success(snapshot))], at: 100)
        store.render(now: 100)
        XCTAssertEqual(store.nextStaleDeadline(), 600)
        store.render(now: 600)
        XCTAssertEqual(store.nextStaleDeadline(), 1900, "then the weather going stale")
    }

    /// A warning ask that was in flight while a reload moved the place is not recorded for it.
    func testWarningsForAPlaceChangedMeanwhileAreIgnored() {
        let oslo = Place(name: "Oslo", latitude: 59.91, longitude: 10.75)
        let store = WeatherStore(
            config: Config(places: [oslo]), telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics",
            now: 0, processMetrics: { MetricFamilies() })
        let moved = Place(name: "Oslo", latitude: 69.65, longitude: 18.96)
        let wind = WeatherWarning(id: "w", source: "met-norway", event: "Wind", severity: .moderate)
        store.recordWarnings(source: .metNorway, [(moved, .success([wind]))], at: 10)
        XCTAssertNil(store.nextWarningDeadline(), "nothing recorded for the old point")
        store.recordWarnings(source: .metNorway, [(oslo, .success([wind]))], at: 10)
        XCTAssertNotNil(store.nextWarningDeadline(), "recorded for the place as configured")
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

extension WeatherStore {
    /// The published `/metrics` page (Prometheus format) read back into series → value.
    var renderedSamples: [String: Double] {
        Exposition.parse(String(buffer: rendered.metrics.prometheus))
    }
}
