import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The refresh schedule in-process: a `Refresher` on a `ManualClock`, fetching through the real
/// libcurl client from a scripted Open-Meteo on 127.0.0.1. Advancing the clock runs the timers
/// that fall due, synchronously, so every assertion is about time the test chose, not waited.
final class RefresherTests: XCTestCase {
    /// What the scripted Open-Meteo answers next, and what it was asked.
    final class Upstream: @unchecked Sendable {
        private let state = NIOLockedValueBox<(answer: ScriptedHTTPServer.Answer, requests: [String])>((.hang, []))
        let forecast: [UInt8]

        init() throws {
            forecast = try TestPaths.fixtureBytes("open-meteo-forecast.json")
            answerOK()
        }

        var requests: [String] { state.withLockedValue { $0.requests } }
        func answerOK() { answer(.respond(status: .ok, headers: [], body: forecast)) }
        func answer(status: HTTPResponseStatus, headers: [(String, String)] = []) {
            answer(.respond(status: status, headers: headers, body: Array("{\"error\":true,\"reason\":\"no\"}".utf8)))
        }
        func answer(_ answer: ScriptedHTTPServer.Answer) { state.withLockedValue { $0.answer = answer } }
        func take(_ head: HTTPRequestHead) -> ScriptedHTTPServer.Answer {
            state.withLockedValue { state in
                state.requests.append(head.uri)
                return state.answer
            }
        }
    }

    var upstream: Upstream!
    var server: ScriptedHTTPServer!
    var clock: ManualClock!
    var store: WeatherStore!
    var refresher: Refresher!
    var storage: URL!

    override func setUpWithError() throws {
        let upstream = try Upstream()
        self.upstream = upstream
        server = try ScriptedHTTPServer { upstream.take($0) }
        clock = ManualClock()
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-refresher-\(UUID().uuidString)")
    }

    override func tearDown() {
        refresher?.stop()
        server.stop()
        try? FileManager.default.removeItem(at: storage)
    }

    func config(interval: Double = 60, staleAfter: Double = 1800, places: [String] = ["Berlin"]) -> Config {
        Config(
            provider: ProviderSettings(url: server.baseURL),
            refresh: RefreshSettings(interval: interval, timeout: 5, staleAfter: staleAfter),
            places: places.enumerated().map { Place(name: $1, latitude: 52.52 + Double($0), longitude: 13.41) })
    }

    /// Starts a refresher on `config`; `jitter` pins the back-off's random part.
    func start(_ config: Config, jitter: Double = 0.5) {
        store = WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: clock.now()),
            telemetryPath: "/metrics", now: clock.now(), processMetrics: { MetricFamilies() })
        var logger = Logger(label: "refresher-tests")
        logger.logLevel = .critical
        refresher = Refresher(
            store: store, client: CurlHTTPClient(userAgent: "cloudy-tests"), storagePath: storage.path,
            logger: logger, clock: clock, jitter: { jitter })
        refresher.start()
    }

    /// A reload as ConfigReloader does it: the store takes the new places, the refresher reschedules.
    func reload(to config: Config, from previous: Config) {
        store.replaceConfig(config)
        refresher.apply(config, previous: previous)
        refresher.waitForQueuedWork()
    }

    var metricsText: String { String(buffer: store.rendered.metrics.prometheus) }
    var nextRefreshIn: Double? { refresher.nextRefresh.map { $0 - clock.now() } }

    func testFirstRefreshAtStartThenEveryInterval() throws {
        start(config(interval: 60))
        XCTAssertEqual(upstream.requests.count, 0, "nothing before the timer fires")
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 1)
        XCTAssertTrue(metricsText.contains("weather_up{location=\"Berlin\"} 1"))
        XCTAssertNil(store.rendered.readiness.notReadyReason, "ready after the first good refresh")
        clock.advance(by: 59.9)
        XCTAssertEqual(upstream.requests.count, 1, "no request before the interval is up")
        clock.advance(by: 0.1)
        XCTAssertEqual(upstream.requests.count, 2)
        clock.advance(by: 600)
        XCTAssertEqual(upstream.requests.count, 12, "one a minute, never two in one slot")
    }

    func testFailuresBackOffDoublingUpToTheBoundWithinTheJitterRange() throws {
        for (jitter, factor) in [(0.0, 0.8), (1.0, 1.2)] {
            clock = ManualClock()
            upstream.answer(status: .serviceUnavailable)
            start(config(interval: 60), jitter: jitter)
            clock.advance(by: 0)
            var waits: [Double] = []
            for _ in 0..<5 {
                waits.append(try XCTUnwrap(nextRefreshIn))
                clock.advance(by: try XCTUnwrap(nextRefreshIn))
            }
            // The bound is max(4 × 60 s, 60 s) = 240 s; jitter scales each wait by 0.8…1.2, the
            // first one too (metrics.md).
            let expected = [60.0, 120, 240, 240, 240].map { $0 * factor }
            for (wait, want) in zip(waits, expected) {
                XCTAssertEqual(wait, want, accuracy: 1e-6, "jitter \(jitter): \(waits)")
            }
            XCTAssertEqual(upstream.requests.count, 6)
            XCTAssertTrue(metricsText.contains("weather_up{location=\"Berlin\"} 0"))
            upstream.answerOK()
            clock.advance(by: try XCTUnwrap(nextRefreshIn))
            XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 60, accuracy: 1e-6, "one success returns to the interval")
            refresher.stop()
            upstream = try Upstream()
            let fresh = upstream!
            server.stop()
            server = try ScriptedHTTPServer { fresh.take($0) }
        }
    }

    func testRetryAfterHoldsEveryRequestBack() throws {
        start(config(interval: 60))
        upstream.answer(status: .tooManyRequests, headers: [("Retry-After", "900")])
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 1)
        upstream.answerOK()
        clock.advance(by: 899)
        XCTAssertEqual(upstream.requests.count, 1, "after a 429 with Retry-After: 900, no request for 900 s")
        clock.advance(by: 1)
        XCTAssertEqual(upstream.requests.count, 2, "and then it asks again")
        XCTAssertEqual(store.telemetry.upstreamCount(provider: .openMeteo, code: "429"), 1)
    }

    func testStaleWeatherVanishesAtStaleAfterWhileRefreshesFail() throws {
        start(config(interval: 60, staleAfter: 300))
        clock.advance(by: 0)
        XCTAssertTrue(metricsText.contains("weather_temperature_celsius{location=\"Berlin\"} "))
        upstream.answer(status: .internalServerError)
        clock.advance(by: 60)
        XCTAssertTrue(metricsText.contains("weather_up{location=\"Berlin\"} 0"))
        XCTAssertTrue(
            metricsText.contains("weather_temperature_celsius{location=\"Berlin\"} "), "kept until stale_after")
        clock.advance(by: 239.9)
        XCTAssertTrue(metricsText.contains("weather_temperature_celsius{location=\"Berlin\"} "))
        // The back-off has pushed the next refresh past the deadline; the stale timer re-renders alone.
        let requests = upstream.requests.count
        clock.advance(by: 0.2)
        XCTAssertEqual(upstream.requests.count, requests, "the page changed without a refresh")
        XCTAssertFalse(metricsText.contains("weather_temperature_celsius{location=\"Berlin\"}"))
        XCTAssertFalse(metricsText.contains("weather_forecast"), "every weather series goes")
        XCTAssertTrue(
            metricsText.contains("weather_last_success_timestamp_seconds{location=\"Berlin\"} "), "health stays")
    }

    /// A reload that shortens `stale_after` moves the stale re-render: while the provider fails
    /// and the back-off holds the next refresh, the weather vanishes at the new deadline, not at
    /// the old one nor at the next refresh. (900 s: what `FairUse` allows at a 600 s interval.)
    func testAShorterStaleAfterFromAReloadTakesEffectWithoutARefresh() throws {
        let first = config(interval: 600, staleAfter: 3600)
        start(first)
        clock.advance(by: 0)
        upstream.answer(status: .internalServerError)
        clock.advance(by: 600)
        XCTAssertEqual(upstream.requests.count, 2)
        XCTAssertGreaterThan(try XCTUnwrap(nextRefreshIn), 300, "backed off past the new deadline")
        var shorter = first
        shorter.refresh.staleAfter = 900
        reload(to: shorter, from: first)
        store.render(now: clock.now())
        XCTAssertTrue(metricsText.contains("weather_temperature_celsius{location=\"Berlin\"} "))
        clock.advance(by: 300.1)
        XCTAssertEqual(upstream.requests.count, 2, "no refresh since the failed one")
        XCTAssertFalse(metricsText.contains("weather_temperature_celsius{location=\"Berlin\"}"), "stale at 900 s")
    }

    func testReloadWithANewPlaceAsksItAtOnceAndTheOthersKeepTheSchedule() throws {
        let first = config(interval: 60)
        start(first)
        clock.advance(by: 0)
        clock.advance(by: 10)
        XCTAssertEqual(upstream.requests.count, 1)

        reload(to: first, from: first)
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 1, "an unchanged config is no way around the interval")
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 50, accuracy: 1e-6)

        let added = config(interval: 60, places: ["Berlin", "Oslo"])
        reload(to: added, from: first)
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 2, "a new place is fetched at once")
        XCTAssertTrue(upstream.requests.last?.contains("latitude=53.52&") == true, upstream.requests.last ?? "")
        XCTAssertTrue(metricsText.contains("weather_temperature_celsius{location=\"Oslo\"} "))
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 50, accuracy: 1e-6, "Berlin is not asked again before its time")
        let forecast = String(decoding: upstream.forecast, as: UTF8.self)
        upstream.answer(.respond(status: .ok, headers: [], body: Array("[\(forecast),\(forecast)]".utf8)))
        clock.advance(by: 50)
        XCTAssertEqual(upstream.requests.count, 3)
        XCTAssertTrue(upstream.requests.last?.contains("latitude=52.52,53.52") == true, upstream.requests.last ?? "")

        let slower = config(interval: 300, places: ["Berlin", "Oslo"])
        reload(to: slower, from: added)
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 300, accuracy: 1e-6, "a new interval counts from the last start")
    }

    /// A reload that adds a place and changes the interval (by hand, or the quota plan's
    /// stretch) asks the place at once and the others at the new interval, not the old one.
    func testAnAddedPlaceAndANewIntervalAreBothTakenAtOnce() throws {
        let first = config(interval: 60)
        start(first)
        clock.advance(by: 0)
        clock.advance(by: 10)
        reload(to: config(interval: 300, places: ["Berlin", "Oslo"]), from: first)
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 2, "Oslo at once")
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 290, accuracy: 1e-6, "300 s from the last start")
    }

    /// A new `provider.user_agent` goes with the next request: nothing is asked again for it
    /// (MET Norway's `Expires` and OpenWeatherMap's call spacing live in the provider).
    func testANewUserAgentAsksNothingAgain() throws {
        let first = config(interval: 60)
        start(first)
        clock.advance(by: 0)
        var second = first
        second.provider.userAgent = "cloudy-tests/2 ops@example.org"
        reload(to: second, from: first)
        clock.advance(by: 0)
        XCTAssertEqual(upstream.requests.count, 1)
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 60, accuracy: 1e-6)
    }

    func testReloadDuringBackOffWaitsForTheBackOff() throws {
        let first = config(interval: 60)
        start(first)
        upstream.answer(status: .tooManyRequests, headers: [("Retry-After", "600")])
        clock.advance(by: 0)
        upstream.answerOK()
        let added = config(interval: 60, places: ["Berlin", "Oslo"])
        let forecast = String(decoding: upstream.forecast, as: UTF8.self)
        upstream.answer(.respond(status: .ok, headers: [], body: Array("[\(forecast),\(forecast)]".utf8)))
        reload(to: added, from: first)
        clock.advance(by: 599)
        XCTAssertEqual(upstream.requests.count, 1, "a reload does not jump a Retry-After")
        clock.advance(by: 1)
        XCTAssertEqual(upstream.requests.count, 2)
    }

    /// A failure's wait is worked out again at a new interval: a day's back-off (a typo such as
    /// `1d` for `1m`) does not hold the interval fixed by a reload for the rest of the day. A
    /// Retry-After still holds (above).
    func testAReloadThatLowersTheIntervalShortensTheBackOff() throws {
        let daily = config(interval: 86400)
        start(daily, jitter: 0.5)
        upstream.answer(status: .serviceUnavailable)
        clock.advance(by: 0)
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 86400, accuracy: 1e-6, "the first failure waits the interval")
        upstream.answerOK()
        clock.advance(by: 10)
        reload(to: config(interval: 60), from: daily)
        XCTAssertEqual(try XCTUnwrap(nextRefreshIn), 50, accuracy: 1e-6, "60 s from the failure, not a day")
        clock.advance(by: 50)
        XCTAssertEqual(upstream.requests.count, 2)
        XCTAssertTrue(metricsText.contains("weather_up{location=\"Berlin\"} 1"))
    }

    func testStopCancelsTheTimers() throws {
        start(config(interval: 60))
        clock.advance(by: 0)
        refresher.stop()
        refresher.waitForQueuedWork()
        clock.advance(by: 3600)
        XCTAssertEqual(upstream.requests.count, 1)
        XCTAssertEqual(clock.pendingDeadlines, [])
    }
}
