import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// A reload that moves the air quality to another quota account while its batch is out: the
/// batch comes back to the feed the reload retired, and a quota refusal it brings is kept for the
/// account it was asked on (not cancelled, as a shutdown's is).
extension AirQualityFeedTests {
    static let hourly = #"{"error":true,"reason":"Hourly API request limit exceeded."}"#

    /// A server of the air quality's own that answers its second request with `refusal` (the
    /// hour's quota refusal) once `gate` opens, and the others with `fixture`; the forecast from
    /// the rig's entry. `asked` counts the air-quality requests, `forecasts` the forecast's.
    func airQualityServer(
        holding gate: ScriptedHTTPServer.ReleaseGate, asked: NIOLockedValueBox<Int>,
        forecasts: NIOLockedValueBox<Int> = NIOLockedValueBox(0), fixture: String = "open-meteo-air-quality.json",
        refusal: [UInt8] = Array(hourly.utf8)
    ) throws -> ScriptedHTTPServer {
        let fixture = Array(try TestPaths.fixtureBytes(fixture))
        let forecast = Array(rig.entry.utf8)
        let server = try ScriptedHTTPServer { head in
            // A path, or a proxy's whole URL; Open-Meteo's air quality or OpenWeatherMap's.
            guard head.uri.contains("/v1/air-quality") || head.uri.contains("/air_pollution") else {
                forecasts.withLockedValue { $0 += 1 }
                return .respond(status: .ok, headers: [], body: forecast)
            }
            let count = asked.withLockedValue { asked in
                asked += 1
                return asked
            }
            return count == 2
                ? .held(gate, then: .respond(status: .tooManyRequests, headers: [], body: refusal))
                : .respond(status: .ok, headers: [], body: fixture)
        }
        addTeardownBlock {
            gate.open()
            server.stop()
        }
        return server
    }

    /// Starts the next refresh on another thread (it waits on the air quality's held batch) and
    /// returns once that batch is out; the group is left when the refresh has run.
    func sendTheNextBatch(asked: NIOLockedValueBox<Int>) -> DispatchGroup {
        let refresh = DispatchGroup()
        let clock = rig.clock
        DispatchQueue.global().async(group: refresh) { clock.advance(by: 600) }
        let deadline = Date().addingTimeInterval(10)
        while asked.withLockedValue({ $0 }) < 2, Date() < deadline { usleep(1000) }
        XCTAssertEqual(asked.withLockedValue { $0 }, 2, "the air quality's batch is out")
        return refresh
    }

    /// Moved to a mirror while its batch is out, which then comes back refused for the hour: the
    /// account left keeps the refusal, the file keeps it beside the mirror's (for a restart on
    /// the config rolled back), and a reload back does not ask that server before it lifts.
    func testARefusalThatComesBackAfterAReloadAwayHoldsOnAReloadBack() throws {
        try answer()
        let (gate, asked) = (ScriptedHTTPServer.ReleaseGate(), NIOLockedValueBox(0))
        let own = try airQualityServer(holding: gate, asked: asked)
        let file = rig.storage.appendingPathComponent("quota-air-quality.json")
        let (feed, config) = rig.startWithAirQuality(at: own.baseURL, ownQuotaFile: file)
        airQuality = feed
        let (left, retired) = (feed.account, feed.feed)
        let refresh = sendTheNextBatch(asked: asked)
        let moved = try reloadOntoAMirror(feed, from: config)
        XCTAssertNil(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).others?.first?.quietPeriod)
        answerTheBatchOut(gate, refresh, retired)
        let refused = try XCTUnwrap(left.quietPeriod, "the refusal the batch brought back")
        XCTAssertEqual(refused.until, QuietPeriod.lift(after: .hour, now: rig.clock.now()))
        XCTAssertNil(feed.account.quietPeriod, "the mirror refused nothing")
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertTrue(kept.isFor(.openMeteo, url: try XCTUnwrap(moved.airQuality?.url)), kept.owner)
        XCTAssertEqual(kept.others?.map(\.quietPeriod?.until), [refused.until], "in the file, beside the mirror's")

        feed.apply(config, previous: moved)
        XCTAssertTrue(feed.account === left, "the account left is taken up again")
        rig.clock.advance(by: 60)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(asked.withLockedValue { $0 }, 2, "the server is not asked before the refusal lifts")
    }

    /// The air quality alone on a server of its own (`airQualityServer`) whose second batch is
    /// out and held, when a reload moves the forecast onto that server (`moved`).
    struct ForecastMovedIn {
        let feed: AirQualityFeed, config: Config, moved: Config, retired: Feed<AirQualityReport>
        let refresh: DispatchGroup, gate: ScriptedHTTPServer.ReleaseGate
        let asked: NIOLockedValueBox<Int>, forecasts: NIOLockedValueBox<Int>
    }

    func moveTheForecastInWhileABatchIsOut() throws -> ForecastMovedIn {
        try answer()
        let (gate, asked, forecasts) = (ScriptedHTTPServer.ReleaseGate(), NIOLockedValueBox(0), NIOLockedValueBox(0))
        let own = try airQualityServer(holding: gate, asked: asked, forecasts: forecasts)
        let (feed, config) = rig.startWithAirQuality(at: own.baseURL)
        airQuality = feed
        let retired = feed.feed
        let refresh = sendTheNextBatch(asked: asked)
        var moved = config
        moved.provider = ProviderSettings(url: own.baseURL)
        rig.reload(to: moved, from: config)
        feed.apply(moved, previous: config)
        XCTAssertTrue(feed.account === rig.refresher.account, "one server, one quota")
        return ForecastMovedIn(
            feed: feed, config: config, moved: moved, retired: retired, refresh: refresh, gate: gate, asked: asked,
            forecasts: forecasts)
    }

    /// Lets the held batch come back refused, and waits until it and what followed have run.
    func answerTheBatchOut(_ move: ForecastMovedIn) {
        answerTheBatchOut(move.gate, move.refresh, move.retired)
        rig.refresher.waitForQueuedWork()
        move.feed.feed.waitForQueuedWork()
    }

    /// The forecast moved onto the server the air quality asked alone while the air quality's
    /// batch is out there: the weather's account, which the air quality joins, learns of the
    /// refusal the batch brings back after the move, and the forecast does not ask into it.
    func testARefusalThatComesBackAfterTheForecastMovedInReachesTheWeathersAccount() throws {
        let move = try moveTheForecastInWhileABatchIsOut()
        answerTheBatchOut(move)
        let refused = try XCTUnwrap(rig.refresher.account.quietPeriod, "the refusal the batch brought back")
        XCTAssertEqual(refused.until, QuietPeriod.lift(after: .hour, now: rig.clock.now()))

        let forecastsAsked = move.forecasts.withLockedValue { $0 }
        rig.clock.advance(by: 600)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(move.forecasts.withLockedValue { $0 }, forecastsAsked, "the forecast is held by it")
    }

    /// The same, and a second reload while the batch is still out moves the forecast back to its
    /// own server: the refusal is the air quality's server's, so it holds the air quality's new
    /// account there, not the forecast's server, which refused nothing.
    func testARefusalThatComesBackAfterTwoReloadsHoldsTheServerThatRefused() throws {
        let move = try moveTheForecastInWhileABatchIsOut()
        rig.reload(to: move.config, from: move.moved)
        move.feed.apply(move.config, previous: move.moved)
        XCTAssertFalse(move.feed.account === rig.refresher.account, "the air quality alone on its server again")
        answerTheBatchOut(move)
        XCTAssertNil(rig.refresher.account.quietPeriod, "the forecast's server refused nothing")
        let refused = try XCTUnwrap(move.feed.account.quietPeriod, "the air quality's server refused for the hour")
        XCTAssertEqual(refused.until, QuietPeriod.lift(after: .hour, now: rig.clock.now()))
        let askedBefore = move.asked.withLockedValue { $0 }
        rig.clock.advance(by: 600)
        move.feed.feed.waitForQueuedWork()
        XCTAssertEqual(move.asked.withLockedValue { $0 }, askedBefore, "and it is not asked before that lifts")
    }

    /// On Open-Meteo's public hosts, where the forecast's host counts the air-quality host's
    /// calls on one free limit: a reload moves the forecast onto its public host while the air
    /// quality's batch is out on an account of its own, and the refusal that batch brings back
    /// holds the weather's account. The public hosts are reached through a scripted proxy
    /// (`http_proxy`, which libcurl reads), which answers for both.
    func testARefusalThatComesBackFromThePublicAirQualityHostHoldsTheWeathersAccount() throws {
        let (gate, asked, forecasts) = (ScriptedHTTPServer.ReleaseGate(), NIOLockedValueBox(0), NIOLockedValueBox(0))
        let proxy = try airQualityServer(holding: gate, asked: asked, forecasts: forecasts)
        // libcurl reads these at each request; what the process had is put back afterwards.
        let saved = ["http_proxy", "no_proxy", "NO_PROXY"].map { (name: String) in
            (name, ProcessInfo.processInfo.environment[name])
        }
        addTeardownBlock {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        setenv("http_proxy", proxy.baseURL, 1)
        unsetenv("no_proxy")
        unsetenv("NO_PROXY")
        var config = rig.config(places: 1, interval: 600, url: "http://mirror.invalid")
        config.airQuality = AirQualitySettings(url: "http://air-quality-api.open-meteo.com")
        let feed = startAirPollution(config)
        XCTAssertFalse(feed.account === rig.refresher.account, "the mirror does not count the public limit")
        let retired = feed.feed
        let refresh = sendTheNextBatch(asked: asked)
        var moved = config
        moved.provider = ProviderSettings(url: "http://api.open-meteo.com")
        rig.reload(to: moved, from: config)
        feed.apply(moved, previous: config)
        XCTAssertTrue(feed.account === rig.refresher.account, "the public hosts: one limit")
        answerTheBatchOut(gate, refresh, retired)
        rig.refresher.waitForQueuedWork()
        let refused = try XCTUnwrap(rig.refresher.account.quietPeriod, "the refusal the batch brought back")
        XCTAssertEqual(refused.until, QuietPeriod.lift(after: .hour, now: rig.clock.now()))
        let forecastsAsked = forecasts.withLockedValue { $0 }
        rig.clock.advance(by: 600)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(forecasts.withLockedValue { $0 }, forecastsAsked, "the forecast does not ask into it")
    }
}
