import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The air-quality feed beside the weather's on Open-Meteo's one quota (`AirQualityFeed` on the
/// `Refresher`'s `QuotaAccount`), on a `ManualClock`, through the real libcurl client against one
/// scripted Open-Meteo serving both the forecast and the air-quality endpoint.
final class AirQualityFeedTests: XCTestCase {
    var rig: RefresherRig!
    var airQuality: AirQualityFeed?

    override func setUpWithError() throws {
        rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
    }

    override func tearDown() {
        airQuality?.stop(timeout: 0.5)
        rig.stop()
    }

    let forecastWeight = CallCost.openMeteo(ForecastSettings())
    let airQualityWeight = CallCost.openMeteoAirQuality(ForecastSettings(), pollen: true)

    func isAirQuality(_ asked: RefresherRig.Asked) -> Bool { asked.uri.hasPrefix("/v1/air-quality") }

    /// What Open-Meteo counts for the requests asked so far.
    func weight(_ asked: RefresherRig.Asked) -> Double {
        Double(asked.places) * (isAirQuality(asked) ? airQualityWeight : forecastWeight)
    }

    /// The forecast as the rig answers it, the air quality from its fixture, or `airQuality`.
    func answer(airQuality: ScriptedHTTPServer.Answer? = nil) throws {
        let forecast = rig.entry
        let entry = String(decoding: try TestPaths.fixtureBytes("open-meteo-air-quality.json"), as: UTF8.self)
        rig.answer { head in
            let isAirQuality = head.uri.hasPrefix("/v1/air-quality")
            if isAirQuality, let airQuality { return airQuality }
            let one = isAirQuality ? entry : forecast
            let count = RefresherRig.placeCount(head.uri)
            let body = count == 1 ? one : "[" + Array(repeating: one, count: count).joined(separator: ",") + "]"
            return .respond(status: .ok, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }
    }

    /// The weather feed and the air-quality feed started on `places` places under `limits`; with
    /// `weatherLast`, the air quality's timer armed first.
    func start(places: Int, limits: [QuotaWindow: Double], weatherLast: Bool = false) -> Config {
        var config = rig.config(places: places, interval: 600)
        config.airQuality = AirQualitySettings(url: rig.server.baseURL)
        let budget = CallBudget(quota: Quota(limits: limits), callsPerPlace: forecastWeight)
        rig.start(config, budget: budget, starting: !weatherLast)
        let feed = AirQualityFeed(
            config: config, store: rig.store, weather: rig.refresher, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: rig.log.logger, clock: rig.clock)
        XCTAssertTrue(feed.account === rig.refresher.account, "one account for the one quota")
        airQuality = feed
        feed.start()
        if weatherLast { rig.refresher.start() }
        return config
    }

    func testBothFeedsSpendOneLedgerAndPaceWithinTheWindow() throws {
        try answer()
        // Four places cost 11.6 calls of forecast and 6.4 of air quality; 90 % of 15 holds 13.5.
        _ = start(places: 4, limits: [.minute: 15, .hour: 10_000])
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 2, "the forecast, then as much air quality as is left")
        XCTAssertEqual(rig.asked.map(isAirQuality), [false, true])
        XCTAssertEqual(rig.asked.last?.places, 1, "1.9 calls left in the minute: one place")
        rig.clock.advance(by: 185)
        let airQualityPlaces = rig.asked.filter(isAirQuality).map(\.places).reduce(0, +)
        XCTAssertEqual(airQualityPlaces, 4, "paced over the next minutes")
        for request in rig.asked {
            let inMinute = rig.asked.filter { $0.time > request.time - 60 && $0.time <= request.time }
            XCTAssertLessThanOrEqual(inMinute.map(weight).reduce(0, +), 13.5 + 1e-9, "up to \(request.time)")
        }
        XCTAssertEqual(rig.store.statuses.filter { $0.airQuality?.isUp ?? false }.count, 4)
        XCTAssertEqual(rig.placesUp, 4)
        let sum = rig.asked.map(weight).reduce(0, +)
        XCTAssertEqual(sum, 4 * (forecastWeight + airQualityWeight), accuracy: 1e-9)
        XCTAssertEqual(rig.refresher.account.spent(inLast: 3600, at: rig.clock.now()), sum, accuracy: 1e-9)
        XCTAssertEqual(rig.store.telemetry.callCount(provider: .openMeteo), sum, accuracy: 1e-9, "one counter")
        let kept = try XCTUnwrap(
            QuotaState.load(
                from: QuotaState.file(in: rig.storage.path), provider: .openMeteo, url: rig.server.baseURL,
                logger: rig.log.logger))
        XCTAssertEqual(kept.ledger.spent(inLast: 3600, at: rig.clock.now()), sum, accuracy: 1e-9, "quota.json")
    }

    /// Both feeds on two places, their first step taken, the air-quality host refusing for
    /// Open-Meteo's quota with `reason`.
    func startWithTheAirQualityHostRefusing(_ reason: String) throws {
        try answer(
            airQuality: .respond(
                status: .tooManyRequests, headers: [],
                body: Array("{\"error\":true,\"reason\":\"\(reason)\"}".utf8)))
        _ = start(places: 2, limits: [:])
        rig.clock.advance(by: 0)
    }

    /// Open-Meteo's limiter keeps one counter per client for all its APIs (the reference, §6.3),
    /// so its refusal on the air-quality host holds the forecast too.
    func testAQuotaRefusalOnTheAirQualityHostQuietsTheForecast() throws {
        try startWithTheAirQualityHostRefusing("Hourly API request limit exceeded. Please try again in the next hour.")
        XCTAssertEqual(rig.asked.map(isAirQuality), [false, true])
        let quiet = try XCTUnwrap(rig.refresher.account.quietPeriod)
        XCTAssertEqual(quiet.until, 1_781_528_400 + 60, "a minute past the next UTC hour")
        XCTAssertEqual(rig.placesUp, 2, "the forecast it got before stays")
        rig.clock.advance(by: 600)
        XCTAssertEqual(rig.asked.count, 2, "nothing to Open-Meteo from either feed while it refuses")
        XCTAssertEqual(rig.refresher.nextRefresh, quiet.until, "the weather's next refresh waits for the lift")
        XCTAssertTrue(rig.store.statuses.allSatisfy { $0.quietPeriod == quiet })
        let refusedUntil = #"cloudy_exporter_upstream_quota_refused_until_timestamp_seconds{provider="open-meteo"}"#
        XCTAssertEqual(rig.store.renderedSamples[refusedUntil], quiet.until)
        try answer()
        rig.clock.advance(by: quiet.until - rig.clock.now())
        XCTAssertEqual(rig.asked.count, 4, "both ask again when it lifts")
        rig.refresher.waitForQueuedWork()
        XCTAssertNil(rig.store.renderedSamples[refusedUntil])
        XCTAssertEqual(rig.store.statuses.filter { $0.airQuality?.isUp ?? false }.count, 2)
    }

    /// The forecast's places say that the air-quality host refused at once, on `/readyz` too, not
    /// at the weather feed's next refresh; and no longer once the refusal lifts, although the
    /// weather's next refresh is later.
    func testTheForecastsPlacesShowAnAirQualityRefusalAtOnceAndUntilItLifts() throws {
        try startWithTheAirQualityHostRefusing("Minutely API request limit exceeded. Please try again in one minute.")
        rig.refresher.waitForQueuedWork()
        let quiet = try XCTUnwrap(rig.refresher.account.quietPeriod)
        XCTAssertLessThan(quiet.until, rig.clock.now() + 600, "it lifts before the weather's next refresh")
        XCTAssertTrue(rig.store.statuses.allSatisfy { $0.quietPeriod == quiet })
        let readiness = rig.store.rendered.readiness.answer
        XCTAssertEqual(readiness.split(separator: "\n").filter { $0.hasPrefix("quiet: ") }.count, 2, readiness)
        try answer()
        rig.clock.advance(by: quiet.until - rig.clock.now() + 1)
        XCTAssertEqual(rig.asked.map(isAirQuality), [false, true, true], "only the air quality asks again")
        XCTAssertTrue(rig.store.statuses.allSatisfy { $0.quietPeriod == nil })
        XCTAssertEqual(rig.store.rendered.readiness.answer, "ready")
    }
}

extension AirQualityFeedTests {
    /// A reload that moves the air quality to an account of its own and back lets go of the feed
    /// it replaced: the weather's account is left telling only the two feeds that spend it.
    func testAFeedAReloadReplacedIsLetGo() throws {
        try answer()
        let config = start(places: 1, limits: [:])
        XCTAssertEqual(rig.refresher.account.quietPeriodObserverCount, 2, "the weather's feed and the air quality's")
        var keyed = config
        keyed.provider.apiKey = Secret("customer-key")
        let feed = try XCTUnwrap(airQuality)
        weak let replaced = feed.feed
        feed.apply(keyed, previous: config)
        replaced?.waitForQueuedWork()  // its stop, queued by the reload
        XCTAssertNil(replaced, "nothing holds the feed a reload stopped")
        XCTAssertFalse(feed.account === rig.refresher.account, "a customer key counts on a quota of its own")
        feed.apply(config, previous: keyed)
        XCTAssertTrue(feed.account === rig.refresher.account)
        XCTAssertEqual(rig.refresher.account.quietPeriodObserverCount, 2)
    }
}

extension AirQualityFeedTests {
    static let refusedUntil = "cloudy_exporter_upstream_quota_refused_until_timestamp_seconds"

    /// The weather on the rig's server and the air quality on `own`, a server of its own that
    /// refuses for its quota while `refusing` holds; the first steps taken.
    func startOnAServerOfItsOwn(
        refusing: NIOLockedValueBox<Bool>, asked: NIOLockedValueBox<Int> = NIOLockedValueBox(0),
        ownQuotaFile: URL? = nil
    ) throws -> (ScriptedHTTPServer, Config) {
        try answer()
        let refusal = Array(#"{"error":true,"reason":"Hourly API request limit exceeded."}"#.utf8)
        let fixture = try TestPaths.fixtureBytes("open-meteo-air-quality.json")
        let own = try ScriptedHTTPServer { _ in
            asked.withLockedValue { $0 += 1 }
            return refusing.withLockedValue { $0 }
                ? .respond(status: .tooManyRequests, headers: [], body: refusal)
                : .respond(status: .ok, headers: [], body: Array(fixture))
        }
        let (feed, config) = rig.startWithAirQuality(at: own.baseURL, ownQuotaFile: ownQuotaFile)
        airQuality = feed
        XCTAssertFalse(feed.account === rig.refresher.account, "two servers of one's own")
        return (own, config)
    }

    /// An air-quality server of its own beside a self-hosted forecast spends a quota account of
    /// its own: its quota refusal quiets only the air quality, and the refusal family names the
    /// source (not the provider, whose refusal the places carry) until it lifts.
    func testARefusalOnAnAccountOfItsOwnIsShownUnderTheSourcesName() throws {
        let refusing = NIOLockedValueBox(true)
        let (own, _) = try startOnAServerOfItsOwn(refusing: refusing)
        defer { own.stop() }
        let feed = try XCTUnwrap(airQuality)
        let quiet = try XCTUnwrap(feed.account.quietPeriod)
        XCTAssertNil(rig.refresher.account.quietPeriod, "the forecast's server refused nothing")
        XCTAssertEqual(rig.placesUp, 1)
        let samples = rig.store.renderedSamples
        XCTAssertEqual(samples[Self.refusedUntil + #"{provider="open-meteo-air-quality"}"#], quiet.until)
        XCTAssertNil(samples[Self.refusedUntil + #"{provider="open-meteo"}"#])
        XCTAssertTrue(
            rig.store.statuses[0].airQuality?.lastError?.hasPrefix("no requests to open-meteo-air-quality until")
                == true,
            "the source is held back, not the provider the weather goes on asking")
        refusing.withLockedValue { $0 = false }
        rig.clock.advance(by: quiet.until - rig.clock.now() + 1)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(rig.store.statuses.filter { $0.airQuality?.isUp ?? false }.count, 1, "asked again")
        XCTAssertFalse(rig.store.renderedSamples.keys.contains { $0.hasPrefix(Self.refusedUntil) })
    }

    /// A reload that moves the air quality onto the weather's server leaves the refusal of the
    /// account it left behind.
    func testAReloadToTheWeathersServerDropsTheRefusalOfTheAccountItLeft() throws {
        let (own, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(true))
        defer { own.stop() }
        XCTAssertNotNil(rig.store.renderedSamples[Self.refusedUntil + #"{provider="open-meteo-air-quality"}"#])
        var moved = config
        moved.airQuality = AirQualitySettings(url: rig.server.baseURL)
        let feed = try XCTUnwrap(airQuality)
        feed.apply(moved, previous: config)
        XCTAssertTrue(feed.account === rig.refresher.account)
        feed.feed.waitForQueuedWork()
        rig.store.render(now: rig.clock.now())
        XCTAssertFalse(rig.store.renderedSamples.keys.contains { $0.hasPrefix(Self.refusedUntil) })
    }

    /// A reload that turns the air quality off drops the refusal of its account from the page
    /// at once, not at the weather's next refresh: the source is no longer configured, so
    /// CloudyUpstreamQuotaRefused has nothing to say of it.
    func testTurningTheAirQualityOffDropsItsRefusal() throws {
        let (own, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(true))
        defer { own.stop() }
        XCTAssertNotNil(rig.store.renderedSamples[Self.refusedUntil + #"{provider="open-meteo-air-quality"}"#])
        var off = config
        off.airQuality = nil
        let feed = try XCTUnwrap(airQuality)
        feed.apply(off, previous: config)
        feed.feed.waitForQueuedWork()
        XCTAssertFalse(rig.store.renderedSamples.keys.contains { $0.hasPrefix(Self.refusedUntil) })
    }

    /// OpenWeatherMap's air pollution (current values, asked per place) is not asked again by a
    /// reload that changes only the forecast's days, which its requests do not carry: a place's
    /// calls stay within its ten-minute spacing.
    func testAReloadOfTheForecastsDaysDoesNotAskTheAirPollutionAgain() throws {
        try answer()
        let fixture = try TestPaths.fixtureBytes("openweathermap-air-pollution.json")
        let asked = NIOLockedValueBox(0)
        let owm = try ScriptedHTTPServer { _ in
            asked.withLockedValue { $0 += 1 }
            return .respond(status: .ok, headers: [], body: fixture)
        }
        defer { owm.stop() }
        var config = rig.config(places: 1, interval: 600)
        config.provider.apiKey = Secret("k")
        config.airQuality = AirQualitySettings(source: .openWeatherMap, url: owm.baseURL)
        let feed = startAirPollution(config)
        XCTAssertEqual(asked.withLockedValue { $0 }, 1)
        XCTAssertEqual(rig.store.statuses[0].airQuality?.isUp, true)
        var shorter = config
        shorter.forecast.days = 3
        feed.apply(shorter, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 0)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(asked.withLockedValue { $0 }, 1, "not asked again for days it does not send")
        XCTAssertEqual(try XCTUnwrap(feed.feed.nextRefresh) - rig.clock.now(), 600, accuracy: 1e-6)
    }
}
