import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// Feeds that spend one quota through one `QuotaAccount`: they pace together, a refusal to one
/// quiets both, and what they spent is counted and kept as one sum. On a `ManualClock`, two
/// Open-Meteo feeds through the real libcurl client against one scripted upstream.
final class FeedTests: XCTestCase {
    var rig: RefresherRig!
    var feeds: [Feed<WeatherSnapshot>] = []
    /// What both feeds' requests are counted in, as the exporter has one for every upstream.
    let telemetry = ExporterTelemetry(startedAt: 0)

    override func setUpWithError() throws {
        rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
    }

    override func tearDown() {
        for feed in feeds { feed.stop(timeout: 0.5) }
        rig.stop()
    }

    /// What Open-Meteo counts for one place of `RefresherRig.config`'s request.
    var weight: Double { CallCost.openMeteo(ForecastSettings()) }

    func account(limits: [QuotaWindow: Double]) -> QuotaAccount {
        QuotaAccount(
            provider: .openMeteo, url: rig.server.baseURL, quota: Quota(limits: limits),
            file: QuotaState.file(in: rig.storage.path), now: rig.clock.now(), logger: rig.log.logger)
    }

    /// A started feed of `places` places on `account`, recording into a store of its own.
    func startFeed(places: Int, account: QuotaAccount) -> WeatherStore {
        let config = rig.config(places: places, interval: 600)
        let store = WeatherStore(
            config: config, telemetry: telemetry, telemetryPath: "/metrics", now: rig.clock.now(),
            processMetrics: { MetricFamilies() })
        let client = CurlHTTPClient(userAgent: "cloudy-tests")
        let upstream = Upstream(
            baseURL: rig.server.baseURL, timeout: 5, client: client, recorder: telemetry, clock: rig.clock)
        let feed = Feed(
            source: OpenMeteoProvider(upstream, forecast: config.forecast),
            schedule: FeedSchedule(places: config.places, interval: 600, callsPerPlace: weight),
            recorder: store, account: account, client: client, logger: rig.log.logger, clock: rig.clock,
            jitter: { 0.5 })
        feeds.append(feed)
        feed.start()
        return store
    }

    func testTwoFeedsOnOneQuotaPaceTogetherAndTheSumIsCountedAndKept() throws {
        // 29 calls a minute: within 90 % (26.1), nine places at 2.9 calls each. The hour's
        // limit is far off; it keeps an hour in the ledger.
        let account = account(limits: [.minute: 10 * weight, .hour: 10_000])
        let first = startFeed(places: 12, account: account)
        let second = startFeed(places: 12, account: account)
        let start = rig.clock.now()
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [9], "the second feed waits: the first spent the minute's room")
        rig.clock.advance(by: 61)
        // A minute and a second later the first feed's last 3 go, and the second feed's first 6.
        XCTAssertEqual(rig.asked.map(\.places), [9, 3, 6])
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 3, 6, 6])
        XCTAssertEqual(rig.asked.map { $0.time - start }, [0, 61, 61, 122])
        for request in rig.asked {
            let inMinute = rig.asked.filter { $0.time > request.time - 60 && $0.time <= request.time }
            XCTAssertLessThanOrEqual(
                Double(inMinute.map(\.places).reduce(0, +)) * weight, 0.9 * 29 + 1e-9, "up to \(request.time)")
        }
        XCTAssertEqual(first.statuses.filter(\.isUp).count, 12)
        XCTAssertEqual(second.statuses.filter(\.isUp).count, 12)
        let sum = 24 * weight
        XCTAssertEqual(account.spent(inLast: 3600, at: rig.clock.now()), sum, accuracy: 1e-9)
        XCTAssertEqual(telemetry.callCount(provider: .openMeteo), sum, accuracy: 1e-9, "one counter for both")
        let kept = try XCTUnwrap(
            QuotaState.load(
                from: QuotaState.file(in: rig.storage.path), provider: .openMeteo, url: rig.server.baseURL,
                logger: rig.log.logger))
        XCTAssertEqual(kept.ledger.spent(inLast: 3600, at: rig.clock.now()), sum, accuracy: 1e-9, "quota.json")
        XCTAssertEqual(rig.log.entries(containing: "refresh paced").count, 2, "each feed says it once")
    }

    func testAQuotaRefusalToOneFeedQuietsTheOtherUntilItLifts() throws {
        let account = account(limits: [:])
        rig.answer(
            status: .tooManyRequests, reason: "Hourly API request limit exceeded. Please try again in the next hour.")
        let first = startFeed(places: 2, account: account)
        let second = startFeed(places: 3, account: account)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1, "nothing goes to a provider that refused, from either feed")
        let quiet = try XCTUnwrap(account.quietPeriod)
        XCTAssertEqual(quiet.until, 1_781_528_400 + 60, "a minute past the next UTC hour")
        for store in [first, second] {
            XCTAssertEqual(store.statuses.map(\.quietPeriod), Array(repeating: quiet, count: store.statuses.count))
            XCTAssertTrue(store.rendered.readiness.answer.contains("no requests to open-meteo until"))
        }
        XCTAssertEqual(feeds[1].nextRefresh, quiet.until, "the other feed waits for the lift")
        rig.answerForecasts()
        rig.clock.advance(by: quiet.until - rig.clock.now() - 1)
        XCTAssertEqual(rig.asked.count, 1)
        rig.clock.advance(by: 1)
        XCTAssertEqual(rig.asked.map(\.places), [2, 2, 3], "the refused feed again, then the other")
        XCTAssertEqual(first.statuses.filter(\.isUp).count, 2)
        XCTAssertEqual(second.statuses.filter(\.isUp).count, 3)
        XCTAssertNil(account.quietPeriod)
        XCTAssertEqual(second.rendered.readiness.answer, "ready")
        XCTAssertEqual(rig.log.entries(containing: "refuses requests for its quota").count, 1)
        XCTAssertEqual(rig.log.entries(containing: "quiet period over").count, 1, "said by the feed that lifted it")
    }

    func testAPlanCountsTheFeedsThatShareItsQuota() throws {
        var config = rig.config(places: 100, interval: 600)
        config.provider = ProviderSettings()
        let alone = RefreshPlan(config)
        let shared = RefreshPlan(config, alongside: [QuotaSpending(feed: "air quality", callsPerPlace: 1)])
        XCTAssertEqual(shared.callsPerRefresh, alone.callsPerRefresh + 100, accuracy: 1e-9)
        XCTAssertEqual(shared.planned(.day), alone.planned(.day) + 144 * 100, accuracy: 1e-6)
        XCTAssertGreaterThan(
            try XCTUnwrap(shared.shortestFittingInterval()), try XCTUnwrap(alone.shortestFittingInterval()))
        XCTAssertTrue(
            shared.summary.hasPrefix("100 places, open-meteo: 290 calls per refresh + air quality 100 = 390, "),
            shared.summary)
        XCTAssertEqual(RefreshPlan(config).alongside, [], "no air_quality: nothing shares the weather's quota")
    }
}
