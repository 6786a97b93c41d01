import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// The air quality on a server of its own, with a quota account of its own: what it counts, and
/// what a reload away and back keeps.
extension AirQualityFeedTests {
    /// An account of its own that a reload left keeps its refusal for a reload back: the server
    /// that refused is not asked again before the refusal lifts.
    func testAReloadBackToTheServerOfItsOwnFindsItsRefusal() throws {
        let asked = NIOLockedValueBox(0)
        let (own, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(true), asked: asked)
        defer { own.stop() }
        let feed = try XCTUnwrap(airQuality)
        let refused = try XCTUnwrap(feed.account.quietPeriod)
        XCTAssertEqual(asked.withLockedValue { $0 }, 1)
        let moved = try reloadOntoAMirror(feed, from: config)
        rig.clock.advance(by: 0)
        XCTAssertNil(feed.account.quietPeriod, "the mirror refused nothing")
        feed.apply(config, previous: moved)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 60)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(feed.account.quietPeriod?.until, refused.until, "the refusal it left is found")
        XCTAssertEqual(asked.withLockedValue { $0 }, 1, "and the server is not asked before it lifts")
        rig.store.render(now: rig.clock.now())
        XCTAssertEqual(
            rig.store.renderedSamples[Self.refusedUntil + #"{provider="open-meteo-air-quality"}"#], refused.until)
    }

    /// The calls of an air quality on a quota of its own are counted under its own name, not
    /// the forecast provider's, whose quota they do not spend.
    func testCallsOnAQuotaOfItsOwnAreCountedUnderItsOwnName() throws {
        let (own, _) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(false))
        defer { own.stop() }
        rig.store.render(now: rig.clock.now())
        let calls = "cloudy_exporter_upstream_calls_total"
        XCTAssertEqual(rig.store.renderedSamples[calls + #"{provider="open-meteo-air-quality"}"#], 1.6)
        XCTAssertEqual(rig.store.renderedSamples[calls + #"{provider="open-meteo"}"#], 2.9, "the forecast's alone")
    }

    /// An account of its own keeps a refusal over a restart (`quota-air-quality.json`), so a
    /// crash loop does not ask a refusing server once per start.
    func testARefusalOnAnAccountOfItsOwnHoldsOverARestart() throws {
        let asked = NIOLockedValueBox(0)
        let file = rig.storage.appendingPathComponent("quota-air-quality.json")
        let (own, config) = try startOnAServerOfItsOwn(
            refusing: NIOLockedValueBox(true), asked: asked, ownQuotaFile: file)
        defer { own.stop() }
        let refused = try XCTUnwrap(airQuality?.account.quietPeriod)
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertTrue(kept.isFor(.openMeteo, url: own.baseURL), kept.owner)
        XCTAssertEqual(kept.quietPeriod?.until, refused.until)
        airQuality?.stop(timeout: 1)

        let restarted = restartWithoutAsking(config, file: file, refusedUntil: refused.until, asked: asked)
        rig.clock.advance(by: refused.until - rig.clock.now())
        restarted.feed.waitForQueuedWork()
        XCTAssertEqual(asked.withLockedValue { $0 }, 2, "asked when it lifts")
    }

    /// A server of its own that refused, left by a reload to a mirror, is kept in the file beside
    /// the mirror's: a restart on the config rolled back finds its refusal and does not ask it.
    func testAServerOfItsOwnLeftByAReloadIsKeptInTheFileForARestartBack() throws {
        let file = rig.storage.appendingPathComponent("quota-air-quality.json")
        let asked = NIOLockedValueBox(0)
        let (own, config) = try startOnAServerOfItsOwn(
            refusing: NIOLockedValueBox(true), asked: asked, ownQuotaFile: file)
        defer { own.stop() }
        let feed = try XCTUnwrap(airQuality)
        let refused = try XCTUnwrap(feed.account.quietPeriod)
        let mirror = try XCTUnwrap(try reloadOntoAMirror(feed, from: config).airQuality?.url)
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertTrue(kept.isFor(.openMeteo, url: mirror), kept.owner)
        XCTAssertEqual(kept.others?.first?.quietPeriod?.until, refused.until, "the server left, beside it")
        feed.stop(timeout: 1)
        _ = restartWithoutAsking(config, file: file, refusedUntil: refused.until, asked: asked)
    }

    /// A new feed on `config` and the air quality's `file`, as after a restart: it finds the
    /// refusal until `refusedUntil` and asks nothing a minute on (`asked` still at 1).
    func restartWithoutAsking(
        _ config: Config, file: URL, refusedUntil: Double, asked: NIOLockedValueBox<Int>,
        line: UInt = #line
    ) -> AirQualityFeed {
        let restarted = AirQualityFeed(
            config: config, store: rig.store, weather: rig.refresher, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: rig.log.logger, clock: rig.clock, ownQuotaFile: file)
        airQuality = restarted
        XCTAssertEqual(restarted.account.quietPeriod?.until, refusedUntil, "the refusal is found", line: line)
        restarted.start()
        rig.clock.advance(by: 60)
        restarted.feed.waitForQueuedWork()
        XCTAssertEqual(asked.withLockedValue { $0 }, 1, "the server is not asked before it lifts", line: line)
        return restarted
    }

    /// After a reload to another server of its own the file is that server's: the account left
    /// settles its late batches (a refusal among them), which reach the file once the batch out
    /// at the reload has settled (`AirQualityBatchOutTests`).
    func testAReloadToAnotherServerOfItsOwnGivesItTheFile() throws {
        let file = rig.storage.appendingPathComponent("quota-air-quality.json")
        let (own, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(false), ownQuotaFile: file)
        defer { own.stop() }
        let feed = try XCTUnwrap(airQuality)
        let left = feed.account
        let mirror = try XCTUnwrap(try reloadOntoAMirror(feed, from: config).airQuality?.url)
        XCTAssertTrue(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).isFor(.openMeteo, url: mirror))
        let late = left.beginQuietPeriod(
            reason: "open-meteo: HTTP 429", until: rig.clock.now() + 3600, refusing: .asking(.openMeteo, own.baseURL))
        XCTAssertNotNil(late, "the account left takes a late refusal in")
        let kept = try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger))
        XCTAssertTrue(kept.isFor(.openMeteo, url: mirror), kept.owner)
        XCTAssertNil(kept.quietPeriod, "the mirror refused nothing")
    }

    /// The first account of its own in the process reads the file, also when a reload makes it
    /// (the exporter started with the air quality on the weather's server): a refusal kept
    /// before the restart still holds there.
    func testTheFirstAccountOfItsOwnAfterARestartReadsTheFileOnAReload() throws {
        let until = rig.clock.now() + 3000
        let (own, asked, file) = try refusedBeforeARestart(until: until)
        defer { own.stop() }
        try answer()
        let (feed, config) = rig.startWithAirQuality(at: rig.server.baseURL, ownQuotaFile: file)
        airQuality = feed
        XCTAssertTrue(feed.account === rig.refresher.account, "on the weather's server: the weather's account")
        try reload(feed, from: config, to: own.baseURL, findsRefusalUntil: until, asked: asked)
    }

    /// Reloads `feed` from `config` onto a mirror of its own (stopped when the test ends); returns
    /// the config it moved to.
    func reloadOntoAMirror(_ feed: AirQualityFeed, from config: Config) throws -> Config {
        let (mirror, _) = try rig.mirror()
        addTeardownBlock { mirror.stop() }
        var moved = config
        moved.airQuality = AirQualitySettings(url: mirror.baseURL)
        feed.apply(moved, previous: config)
        feed.feed.waitForQueuedWork()
        return moved
    }

    /// A server of its own that answers the fixture, counting what it is asked, and a file that
    /// keeps its refusal (from before a restart) until `until`.
    func refusedBeforeARestart(until: Double) throws -> (ScriptedHTTPServer, NIOLockedValueBox<Int>, URL) {
        let asked = NIOLockedValueBox(0)
        let fixture = Array(try TestPaths.fixtureBytes("open-meteo-air-quality.json"))
        let server = try ScriptedHTTPServer { _ in
            asked.withLockedValue { $0 += 1 }
            return .respond(status: .ok, headers: [], body: fixture)
        }
        let file = rig.storage.appendingPathComponent("quota-air-quality.json")
        try QuotaState(
            provider: .openMeteo, url: server.baseURL, ledger: CallLedger(),
            quietPeriod: QuietPeriod(provider: .openMeteo, reason: "open-meteo: HTTP 429", until: until)
        ).write(to: file)
        return (server, asked, file)
    }

    /// Reloads `feed` from `config` to the air quality at `url`, and checks that the refusal kept
    /// until `until` holds there: nothing is asked.
    func reload(
        _ feed: AirQualityFeed, from config: Config, to url: String, findsRefusalUntil until: Double,
        asked: NIOLockedValueBox<Int>, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        var moved = config
        moved.airQuality = AirQualitySettings(url: url)
        feed.apply(moved, previous: config)
        feed.feed.waitForQueuedWork()
        rig.clock.advance(by: 60)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(feed.account.quietPeriod?.until, until, "the refusal kept", file: file, line: line)
        XCTAssertEqual(asked.withLockedValue { $0 }, 0, "not asked before it lifts", file: file, line: line)
    }

    /// Started with `air_quality:` off, no account of its own is made (nor the file read for a
    /// server the config does not name): the reload that turns it on finds the refusal.
    func testAReloadThatTurnsTheAirQualityOnFindsTheRefusalKeptBeforeTheRestart() throws {
        let until = rig.clock.now() + 3000
        let (own, asked, file) = try refusedBeforeARestart(until: until)
        defer { own.stop() }
        try answer()
        let off = rig.config(places: 1, interval: 600)
        rig.start(off)
        let feed = AirQualityFeed(
            config: off, store: rig.store, weather: rig.refresher, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: rig.log.logger, clock: rig.clock, ownQuotaFile: file)
        airQuality = feed
        feed.start()
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.log.entries(containing: "the quota state file is for another").count, 0, "not read")
        try reload(feed, from: off, to: own.baseURL, findsRefusalUntil: until, asked: asked)
    }

    /// Started on another server of its own, the file kept for this one is held for a reload
    /// here, as quota.json is for the weather's.
    func testAReloadBackToTheServerTheFileWasKeptForFindsItsRefusal() throws {
        let until = rig.clock.now() + 3000
        let (refused, asked, file) = try refusedBeforeARestart(until: until)
        defer { refused.stop() }
        let (other, config) = try startOnAServerOfItsOwn(refusing: NIOLockedValueBox(false), ownQuotaFile: file)
        defer { other.stop() }
        let feed = try XCTUnwrap(airQuality)
        XCTAssertNil(feed.account.quietPeriod, "the other server refused nothing")
        try reload(feed, from: config, to: refused.baseURL, findsRefusalUntil: until, asked: asked)
    }
}
