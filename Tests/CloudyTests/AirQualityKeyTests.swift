import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// OpenWeatherMap's air pollution is asked with the provider's key, whose quota it spends
/// (beside One Call: the free plan's, on an account of its own): another key is another quota.
extension AirQualityFeedTests {
    /// OpenWeatherMap's refusal for its quota, which names no window.
    static let block = Array(
        #"{"cod":429,"message":"Your account is temporary blocked due to exceeding of requests limitation"}"#.utf8)

    /// An OpenWeatherMap that blocks `blocked-key` for its quota and answers any other key's air
    /// pollution with the fixture; `asked` records each request's URI.
    func airPollutionServer(asked: NIOLockedValueBox<[String]>) throws -> ScriptedHTTPServer {
        let blocked = Self.block
        let fixture = try TestPaths.fixtureBytes("openweathermap-air-pollution.json")
        let server = try ScriptedHTTPServer { head in
            asked.withLockedValue { $0.append(head.uri) }
            return head.uri.contains("appid=blocked-key")
                ? .respond(status: .tooManyRequests, headers: [], body: blocked)
                : .respond(status: .ok, headers: [], body: fixture)
        }
        addTeardownBlock { server.stop() }
        return server
    }

    /// `config` started, and its air-quality feed with its first steps taken.
    func startAirPollution(_ config: Config) -> AirQualityFeed {
        rig.start(config)
        let feed = AirQualityFeed(
            config: config, store: rig.store, weather: rig.refresher, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: rig.log.logger, clock: rig.clock)
        airQuality = feed
        feed.start()
        rig.clock.advance(by: 0)
        feed.feed.waitForQueuedWork()
        return feed
    }

    /// Reloads the rig and `feed` from `previous` to `config`, and lets the steps due run.
    func reload(_ feed: AirQualityFeed, to config: Config, from previous: Config) {
        rig.reload(to: config, from: previous)
        feed.apply(config, previous: previous)
        rig.clock.advance(by: 0)
        feed.feed.waitForQueuedWork()
    }

    /// OpenWeatherMap's air pollution on an account of its own is asked with the provider's key:
    /// another key is another quota, so a reload to it is not held by the block the first key got,
    /// and a reload back finds that block.
    func testAnotherKeyIsAnotherQuotaForTheAirPollutionOnAnAccountOfItsOwn() throws {
        try answer()
        let asked = NIOLockedValueBox<[String]>([])
        let owm = try airPollutionServer(asked: asked)
        var config = rig.config(places: 1, interval: 600)
        config.provider.apiKey = Secret("blocked-key")
        config.airQuality = AirQualitySettings(source: .openWeatherMap, url: owm.baseURL)
        let feed = startAirPollution(config)
        XCTAssertFalse(feed.account === rig.refresher.account, "not the forecast's quota")
        let block = try XCTUnwrap(feed.account.quietPeriod, "the first key is blocked")

        var fresh = config
        fresh.provider.apiKey = Secret("fresh-key")
        reload(feed, to: fresh, from: config)
        XCTAssertNil(feed.account.quietPeriod, "another key's quota")
        XCTAssertEqual(asked.withLockedValue { $0 }.filter { $0.contains("appid=fresh-key") }.count, 1, "asked at once")

        rig.reload(to: config, from: fresh)
        feed.apply(config, previous: fresh)
        XCTAssertEqual(feed.account.quietPeriod?.until, block.until, "the first key's block, found again")
    }

    /// The air pollution on the weather's account (OpenWeatherMap without One Call), both held by
    /// the block one key got: a reload to another key asks the air pollution with it at once, as
    /// it asks the weather, not when the first key's block lifts.
    func testAReloadToAnotherKeyAsksTheAirPollutionOnTheWeathersAccountAtOnce() throws {
        try answer()
        let asked = NIOLockedValueBox<[String]>([])
        let owm = try airPollutionServer(asked: asked)
        var config = rig.config(places: 1, interval: 600)
        config.provider = ProviderSettings(
            name: .openWeatherMap, url: rig.server.baseURL, apiKey: Secret("blocked-key"))
        config.airQuality = AirQualitySettings(source: .openWeatherMap, url: owm.baseURL)
        let feed = startAirPollution(config)
        XCTAssertTrue(feed.account === rig.refresher.account, "the provider's key, the provider's quota")
        XCTAssertNotNil(feed.account.quietPeriod, "the key is blocked")

        var fresh = config
        fresh.provider.apiKey = Secret("fresh-key")
        reload(feed, to: fresh, from: config)
        XCTAssertNil(feed.account.quietPeriod, "another key's quota")
        XCTAssertEqual(asked.withLockedValue { $0 }.filter { $0.contains("appid=fresh-key") }.count, 1, "asked at once")
        XCTAssertEqual(rig.store.statuses.filter { $0.airQuality?.isUp ?? false }.count, 1)
    }

    /// A reload to another key while the air pollution's batch is out on an account of its own:
    /// the batch comes back blocked after the move, and the first key's account holds the block
    /// for the back-off's wait (the block names no window), so a reload back does not ask at once.
    func testABlockThatComesBackAfterAReloadToAnotherKeyHoldsTheFirstKey() throws {
        try answer()
        let (gate, asked) = (ScriptedHTTPServer.ReleaseGate(), NIOLockedValueBox(0))
        let owm = try airQualityServer(
            holding: gate, asked: asked, fixture: "openweathermap-air-pollution.json", refusal: Self.block)
        var config = rig.config(places: 1, interval: 600)
        config.provider.apiKey = Secret("first-key")
        config.airQuality = AirQualitySettings(source: .openWeatherMap, url: owm.baseURL)
        let feed = startAirPollution(config)
        let (first, retired) = (feed.account, feed.feed)
        let refresh = sendTheNextBatch(asked: asked)
        var fresh = config
        fresh.provider.apiKey = Secret("fresh-key")
        rig.reload(to: fresh, from: config)
        feed.apply(fresh, previous: config)
        answerTheBatchOut(gate, refresh, retired)
        let block = try XCTUnwrap(first.quietPeriod, "the block the batch brought back")
        XCTAssertGreaterThan(block.until, rig.clock.now() + 60, "for the back-off's wait")

        let askedBefore = asked.withLockedValue { $0 }
        reload(feed, to: config, from: fresh)
        XCTAssertTrue(feed.account === first)
        XCTAssertEqual(asked.withLockedValue { $0 }, askedBefore, "the first key is not asked before it lifts")
    }

    /// OpenWeatherMap without One Call: the air pollution spends the weather's account. A reload
    /// to One Call (a subscription of its own) moves it to an account of its own while its batch
    /// is out, which comes back blocked: the block names no wait and is the free plan's, so it does
    /// not hold the One Call forecast, which goes on spending the weather's account.
    func testABlockThatComesBackAfterAReloadToOneCallDoesNotHoldTheForecast() throws {
        try answer()
        let (gate, asked) = (ScriptedHTTPServer.ReleaseGate(), NIOLockedValueBox(0))
        let owm = try airQualityServer(
            holding: gate, asked: asked, fixture: "openweathermap-air-pollution.json", refusal: Self.block)
        var config = rig.config(places: 1, interval: 600)
        config.provider = ProviderSettings(name: .openWeatherMap, url: rig.server.baseURL, apiKey: Secret("the-key"))
        config.airQuality = AirQualitySettings(source: .openWeatherMap, url: owm.baseURL)
        let feed = startAirPollution(config)
        XCTAssertTrue(feed.account === rig.refresher.account, "the free plan: the weather's account")
        let retired = feed.feed
        let refresh = sendTheNextBatch(asked: asked)
        var oneCall = config
        oneCall.provider.oneCall = true
        rig.reload(to: oneCall, from: config)
        feed.apply(oneCall, previous: config)
        XCTAssertFalse(feed.account === rig.refresher.account, "beside One Call: an account of its own")
        answerTheBatchOut(gate, refresh, retired)
        rig.refresher.waitForQueuedWork()
        XCTAssertNil(rig.refresher.account.quietPeriod, "the One Call forecast is not held")
    }

    /// Lets the held batch come back and waits until it and the retired feed's work have run.
    func answerTheBatchOut(
        _ gate: ScriptedHTTPServer.ReleaseGate, _ refresh: DispatchGroup, _ retired: Feed<AirQualityReport>
    ) {
        gate.open()
        XCTAssertEqual(refresh.wait(timeout: .now() + 10), .success)
        retired.waitForQueuedWork()
    }
}
