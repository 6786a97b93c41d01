import Foundation
import Logging
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// A source that is not the weather, plugged in the way a new upstream is: a `FeedSource` of
/// its own `Report`, a `FeedRecorder`, and a `ConfiguredFeed` built from the config. It gets the
/// schedule, the back-off and reloads from `Feed` without a line of its own. On a `ManualClock`,
/// through the real libcurl client against a scripted upstream.
final class ConfiguredFeedTests: XCTestCase {
    /// Asks `<url>/<place name>` per place; the report is the answer's text.
    struct EchoSource: FeedSource {
        let client: CurlHTTPClient
        let url: String
        let recorder: Exchanges
        var providerLabel: String { "echo" }

        func fetch(_ places: [Place], logger: Logger) -> [Result<String, WeatherFetchError>] {
            places.map { place in
                let path = place.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let request = HTTPRequest(url: url + "/" + path, timeout: 5)
                return client.fetch(request, countedAs: providerLabel, by: recorder) { response in
                    guard response.status == 200 else {
                        return .failure(
                            WeatherAPI.refusal(response, from: "echo", now: Date().timeIntervalSince1970))
                    }
                    return .success(String(decoding: response.body, as: UTF8.self))
                }
            }
        }
    }

    /// The echo source for the places it asks only (a warning service's area).
    struct AreaSource: FeedSource {
        let echo: EchoSource
        let area: Set<String>
        var providerLabel: String { echo.providerLabel }
        func asks(_ place: Place) -> Bool { area.contains(place.name) }
        func fetch(_ places: [Place], logger: Logger) -> [Result<String, WeatherFetchError>] {
            echo.fetch(places, logger: logger)
        }
    }

    /// Every exchange counted, as `provider code`.
    final class Exchanges: UpstreamRecording {
        let counted = NIOLockedValueBox<[String]>([])
        func recordUpstream(provider: String, code: String) {
            counted.withLockedValue { $0.append("\(provider) \(code)") }
        }
        func recordCalls(provider: String, calls: Double) {}
    }

    /// Keeps the last outcome per place.
    final class Reports: FeedRecorder {
        let last = NIOLockedValueBox<[String: Result<String, WeatherFetchError>]>([:])
        func record(_ outcomes: [FeedOutcome<String>], at now: Double) {
            last.withLockedValue { for (place, _, outcome) in outcomes { $0[place.name] = outcome } }
        }
        func setQuietPeriod(_ quietPeriod: QuietPeriod?) {}
        func render(now: Double) {}
        func nextStaleDeadline() -> Double? { nil }
        var succeeded: [String] {
            last.withLockedValue { $0.filter { if case .success = $0.value { true } else { false } }.keys.sorted() }
        }
    }

    /// A feed of `config`'s places every `refresh.interval`, asking the echo source at the rig's
    /// server as `source` wraps it, without a quota; its jitter pinned at the middle.
    static func feed(
        _ config: Config, rig: RefresherRig, reports: Reports, exchanges: Exchanges,
        sourceChanged: @escaping @Sendable (Config, Config) -> Bool = { _, _ in false },
        server: @escaping @Sendable (Config) -> String? = { $0.provider.url },
        source: @escaping @Sendable (EchoSource) -> any FeedSource<String>
    ) -> ConfiguredFeed<String> {
        let client = CurlHTTPClient(userAgent: "cloudy-tests")
        let url = rig.server.baseURL
        return ConfiguredFeed<String>(
            config: config, recorder: reports,
            account: QuotaAccount(
                provider: .openMeteo, url: url, quota: .unlimited, file: nil, now: rig.clock.now(),
                logger: rig.log.logger),
            client: client, locator: nil, logger: rig.log.logger, clock: rig.clock, jitter: { 0.5 },
            schedule: { FeedSchedule(places: $0.places, interval: $0.refresh.interval, callsPerPlace: 0) },
            source: { _, _ in source(EchoSource(client: client, url: url, recorder: exchanges)) },
            sourceChanged: sourceChanged, server: server)
    }

    /// The echo feed of two places every 300 s, each answered "hello <path>", after its first
    /// refresh.
    func startEchoFeed(_ rig: RefresherRig) -> (ConfiguredFeed<String>, Reports, Exchanges, Config) {
        rig.answer { head in .respond(status: .ok, headers: [], body: Array("hello \(head.uri)".utf8)) }
        let exchanges = Exchanges()
        let reports = Reports()
        let config = rig.config(places: 2, interval: 300)
        let feed = Self.feed(config, rig: rig, reports: reports, exchanges: exchanges) { $0 }
        feed.start()
        rig.clock.advance(by: 0)
        return (feed, reports, exchanges, config)
    }

    func testANewSourceGetsTheScheduleTheBackOffAndReloadsFromTheFeed() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        let (feed, reports, exchanges, config) = startEchoFeed(rig)
        defer { feed.stop(timeout: 0.5) }
        XCTAssertEqual(reports.succeeded, ["Place 0", "Place 1"])
        XCTAssertEqual(try reports.last.withLockedValue { try $0["Place 1"]?.get() }, "hello /Place%201")
        XCTAssertEqual(exchanges.counted.withLockedValue { $0 }, ["echo 200", "echo 200"], "counted under its label")

        rig.answer(status: .serviceUnavailable, reason: "down")
        rig.clock.advance(by: 300)
        XCTAssertEqual(reports.succeeded, [], "failures are recorded too")
        // Jitter pinned at the middle: the back-off's first wait is the interval, the next twice it.
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 300, accuracy: 1e-6)
        rig.clock.advance(by: 300)
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 600, accuracy: 1e-6)

        rig.answer { head in .respond(status: .ok, headers: [], body: Array("back \(head.uri)".utf8)) }
        let added = rig.config(places: 3, interval: 300)
        feed.apply(added, previous: config)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(
            try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 600, accuracy: 1e-6,
            "an added place waits for the back-off too")
        rig.clock.advance(by: 600)
        XCTAssertEqual(reports.succeeded, ["Place 0", "Place 1", "Place 2"])
        let backingOff = rig.log.entries(containing: "provider failing; backing off")
        XCTAssertEqual(backingOff.map { $0.metadata["provider"] }, ["echo", "echo"], "which upstream backs off")
        XCTAssertEqual(rig.log.entries(containing: "place refresh failed").first?.metadata["provider"], "echo")
    }

    /// A place the source does not ask (outside its area) gets no request and no outcome, and
    /// does not pass for a success that keeps a failing upstream from backing off.
    func testAPlaceTheSourceDoesNotAskTakesNoPartInTheRefreshOrTheBackOff() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        rig.answer(status: .serviceUnavailable, reason: "down")
        let reports = Reports()
        let config = rig.config(places: 2, interval: 300)
        let exchanges = Exchanges()
        let feed = Self.feed(config, rig: rig, reports: reports, exchanges: exchanges) {
            AreaSource(echo: $0, area: ["Place 0"])
        }
        feed.start()
        defer { feed.stop(timeout: 0.5) }
        rig.clock.advance(by: 0)
        XCTAssertEqual(exchanges.counted.withLockedValue { $0 }, ["echo 503"], "only the place in the area is asked")
        XCTAssertEqual(reports.last.withLockedValue { $0.keys.sorted() }, ["Place 0"])
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 300, accuracy: 1e-6)
        rig.clock.advance(by: 300)
        XCTAssertEqual(
            try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 600, accuracy: 1e-6,
            "every place asked failed: the upstream backs off")
    }

    /// A reload that changes what the source asks (its `url:`, a source added back) starts its
    /// back-off afresh: the source as it is now is asked at once, not after the old one's wait.
    func testAReloadThatChangesTheSourceStartsItsBackOffAfresh() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        rig.answer(status: .serviceUnavailable, reason: "down")
        let reports = Reports()
        let config = rig.config(places: 2, interval: 300)
        let feed = Self.feed(
            config, rig: rig, reports: reports, exchanges: Exchanges(),
            sourceChanged: { $0.provider.url != $1.provider.url }, source: { $0 })
        feed.start()
        defer { feed.stop(timeout: 0.5) }
        rig.clock.advance(by: 0)
        rig.clock.advance(by: 300)
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 600, accuracy: 1e-6, "backing off")

        rig.answer { head in .respond(status: .ok, headers: [], body: Array("hello \(head.uri)".utf8)) }
        var moved = config
        moved.provider.url = rig.server.baseURL + "/elsewhere"
        feed.apply(moved, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertEqual(reports.succeeded, ["Place 0", "Place 1"], "asked at once")
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 300, accuracy: 1e-6)
    }

    /// A source removed and added back in two reloads is the same server: its failures are
    /// forgotten, but the `Retry-After` it sent still holds every request.
    func testASourceAddedBackKeepsTheRetryAfterItsServerSent() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        rig.answer { _ in .respond(status: .serviceUnavailable, headers: [("Retry-After", "3600")], body: []) }
        let exchanges = Exchanges()
        let config = rig.config(places: 2, interval: 300)
        let server: @Sendable (Config) -> String? = { $0.places.isEmpty ? nil : $0.provider.url }
        let feed = Self.feed(
            config, rig: rig, reports: Reports(), exchanges: exchanges,
            sourceChanged: { server($0) != server($1) }, server: server, source: { $0 })
        feed.start()
        defer { feed.stop(timeout: 0.5) }
        rig.clock.advance(by: 0)
        XCTAssertEqual(exchanges.counted.withLockedValue { $0.count }, 2)
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 3600, accuracy: 1e-6)

        var removed = config
        removed.places = []
        feed.apply(removed, previous: config)
        rig.clock.advance(by: 60)
        feed.apply(config, previous: removed)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertEqual(exchanges.counted.withLockedValue { $0.count }, 2, "not asked before its Retry-After")
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 3540, accuracy: 1e-6)

        // The same server spelt otherwise still owes it; another owes nothing to its wait.
        var respelled = config
        respelled.provider.url = rig.server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/v2"
        feed.apply(respelled, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertEqual(exchanges.counted.withLockedValue { $0.count }, 2, "the same server")
        var moved = config
        moved.provider.url = "http://mirror.invalid"  // the echo source still asks the rig
        feed.apply(moved, previous: respelled)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertEqual(exchanges.counted.withLockedValue { $0.count }, 4, "asked at once")
    }

    /// A reload that adds a place to a source asked per place (Dark Sky, OpenWeatherMap's air
    /// pollution) asks that place at once, and the others at their time, not all of them again.
    func testAReloadAsksTheAddedPlaceAtOnceAndTheOthersAtTheirTime() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        let (feed, reports, _, config) = startEchoFeed(rig)
        defer { feed.stop(timeout: 0.5) }
        rig.clock.advance(by: 100)
        let added = rig.config(places: 3, interval: 300)
        feed.apply(added, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.uri), ["/Place%200", "/Place%201", "/Place%202"], "the added place alone")
        XCTAssertEqual(reports.succeeded, ["Place 0", "Place 1", "Place 2"])
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 200, accuracy: 1e-6)
        rig.clock.advance(by: 200)
        XCTAssertEqual(rig.asked.count, 6, "then every place, on the schedule")
    }

    /// Fails its first place for the network after one of its two requests reached the API (as
    /// OpenWeatherMap's forecast after its current weather), its second before either did, and
    /// answers the third.
    struct HalfReachedSource: FeedSource {
        var providerLabel: String { "half" }
        func fetch(_ places: [Place], logger: Logger) -> [Result<String, WeatherFetchError>] {
            var halfway = WeatherFetchError("half: connect", cause: .network)
            halfway.calls = 1
            return [.failure(halfway), .failure(WeatherFetchError("half: connect", cause: .network)), .success("ok")]
        }
    }

    /// A failure that names what it cost is settled at that, though it ended without an answer;
    /// one that names nothing costs nothing when it never reached the API.
    func testAFailureIsSettledAtTheCallsItNames() throws {
        let rig = try RefresherRig()
        defer { rig.stop() }
        let account = QuotaAccount(
            provider: .openWeatherMap, url: rig.server.baseURL, quota: Quota(limits: [.day: 1_000]), file: nil,
            now: rig.clock.now(), logger: rig.log.logger)
        let feed = Feed(
            source: HalfReachedSource(),
            schedule: FeedSchedule(
                places: rig.config(places: 3, interval: 600).places, interval: 600, callsPerPlace: 2),
            recorder: Reports(), account: account, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: rig.log.logger, clock: rig.clock, jitter: { 0.5 })
        feed.start()
        defer { feed.stop() }
        rig.clock.advance(by: 0)
        feed.waitForQueuedWork()
        XCTAssertEqual(account.spent(inLast: 86_400, at: rig.clock.now()), 1 + 0 + 2, accuracy: 1e-9)
    }
}
