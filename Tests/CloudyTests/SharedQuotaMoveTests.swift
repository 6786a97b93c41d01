import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The forecast moved to a mirror while the server it shared with the air quality refuses for
/// its day: the air quality, left on that server with an account of its own, still holds back
/// until the refusal lifts, after a reload and after a restart.
final class SharedQuotaMoveTests: XCTestCase {
    static let daily = "Daily API request limit exceeded. Please try again tomorrow."

    /// An Open-Meteo that refuses every request for its day, counting the forecasts asked.
    static func refusingServer() throws -> (ScriptedHTTPServer, forecastsAsked: NIOLockedValueBox<Int>) {
        let refusal = Array("{\"error\":true,\"reason\":\"\(daily)\"}".utf8)
        let forecastsAsked = NIOLockedValueBox(0)
        let server = try ScriptedHTTPServer { head in
            if head.uri.hasPrefix("/v1/forecast") { forecastsAsked.withLockedValue { $0 += 1 } }
            return .respond(status: .tooManyRequests, headers: [], body: refusal)
        }
        return (server, forecastsAsked)
    }

    /// The forecast on `rig`'s server and the air quality alone on a `refusingServer`, its own
    /// account refused for the day; both stop when the test ends.
    func startWithTheAirQualityRefusedAlone(_ rig: RefresherRig) throws -> (
        feed: AirQualityFeed, config: Config, refusing: ScriptedHTTPServer, forecastsAsked: NIOLockedValueBox<Int>,
        quiet: QuietPeriod
    ) {
        let (refusing, forecastsAsked) = try Self.refusingServer()
        let (feed, config) = rig.startWithAirQuality(at: refusing.baseURL)
        addTeardownBlock {
            feed.stop(timeout: 0.5)
            refusing.stop()
        }
        let quiet = try XCTUnwrap(feed.account.quietPeriod, "the air quality's own account is refused")
        return (feed, config, refusing, forecastsAsked, quiet)
    }

    func testAReloadThatMovesTheForecastToAMirrorKeepsTheAirQualityQuiet() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        let refusal = Array("{\"error\":true,\"reason\":\"\(Self.daily)\"}".utf8)
        let airQuality = String(decoding: try TestPaths.fixtureBytes("open-meteo-air-quality.json"), as: UTF8.self)
        rig.answer { head in
            head.uri.hasPrefix("/v1/air-quality")
                ? .respond(status: .ok, headers: [], body: Array(airQuality.utf8))
                : .respond(status: .tooManyRequests, headers: [], body: refusal)
        }
        let (feed, config) = rig.startWithAirQuality(at: rig.server.baseURL)
        defer { feed.stop(timeout: 0.5) }
        let quiet = try XCTUnwrap(rig.refresher.account.quietPeriod, "the day's refusal quiets the shared account")
        let askedBefore = rig.asked.filter { $0.uri.hasPrefix("/v1/air-quality") }.count

        let (mirror, mirrorAsked) = try rig.mirror()
        defer { mirror.stop() }
        var moved = config
        moved.provider = ProviderSettings(url: mirror.baseURL)
        rig.reload(to: moved, from: config)
        feed.apply(moved, previous: config)
        rig.clock.advance(by: 0)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(mirrorAsked.withLockedValue { $0 }, [1], "the forecast goes to the mirror")
        XCTAssertFalse(feed.account === rig.refresher.account, "the air quality has an account of its own")
        XCTAssertEqual(feed.account.quietPeriod?.until, quiet.until, "and the day's refusal with it")
        rig.clock.advance(by: 600)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(
            rig.asked.filter { $0.uri.hasPrefix("/v1/air-quality") }.count, askedBefore,
            "the server that refused is not asked before the refusal lifts")
        rig.store.render(now: rig.clock.now())
        XCTAssertEqual(
            rig.store.renderedSamples[AirQualityFeedTests.refusedUntil + #"{provider="open-meteo-air-quality"}"#],
            quiet.until, "and the page says so")
    }

    /// The same move while a forecast batch to the shared server is out, which comes back
    /// refused for the day only after the air quality moved to an account of its own: the air
    /// quality hears of that refusal then, and does not ask into the refused day.
    func testARefusalThatComesBackAfterTheMoveReachesTheAirQuality() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        let refusal = Array("{\"error\":true,\"reason\":\"\(Self.daily)\"}".utf8)
        let airQuality = try TestPaths.fixtureBytes("open-meteo-air-quality.json")
        let gate = ScriptedHTTPServer.ReleaseGate()
        let refusing = NIOLockedValueBox(false)
        let entry = "[" + rig.entry + "]"
        rig.answer { head in
            if head.uri.hasPrefix("/v1/air-quality") { return .respond(status: .ok, headers: [], body: airQuality) }
            guard refusing.withLockedValue({ $0 }) else {
                return .respond(status: .ok, headers: [], body: Array(entry.utf8))
            }
            return .held(gate, then: .respond(status: .tooManyRequests, headers: [], body: refusal))
        }
        let (feed, config) = rig.startWithAirQuality(at: rig.server.baseURL)
        defer { feed.stop(timeout: 0.5) }
        XCTAssertNil(rig.refresher.account.quietPeriod)
        let forecastsAsked = { rig.asked.filter { $0.uri.hasPrefix("/v1/forecast") }.count }
        let forecastsBefore = forecastsAsked()

        refusing.withLockedValue { $0 = true }
        let refresh = DispatchGroup()
        let clock = rig.clock
        DispatchQueue.global().async(group: refresh) { clock.advance(by: 600) }
        let deadline = Date().addingTimeInterval(10)
        while forecastsAsked() == forecastsBefore, Date() < deadline { usleep(1000) }
        XCTAssertEqual(forecastsAsked(), forecastsBefore + 1, "the forecast's batch is out")
        let (mirror, _) = try rig.mirror()
        defer { mirror.stop() }
        var moved = config
        moved.provider = ProviderSettings(url: mirror.baseURL)
        rig.store.replaceConfig(moved)
        rig.refresher.apply(moved, previous: config)  // while the forecast's batch is out
        feed.apply(moved, previous: config)
        gate.open()
        XCTAssertEqual(refresh.wait(timeout: .now() + 10), .success)
        rig.refresher.waitForQueuedWork()
        feed.feed.waitForQueuedWork()
        XCTAssertFalse(feed.account === rig.refresher.account)
        let quiet = try XCTUnwrap(feed.account.quietPeriod, "the refusal the batch brought back")
        XCTAssertEqual(quiet.until, QuietPeriod.lift(after: .day, now: rig.clock.now()))
        XCTAssertNil(rig.refresher.account.quietPeriod, "the mirror is not held")
        let airQualityAsked = { rig.asked.filter { $0.uri.hasPrefix("/v1/air-quality") }.count }
        let askedAfterMove = airQualityAsked()
        rig.clock.advance(by: 600)
        feed.feed.waitForQueuedWork()
        XCTAssertEqual(airQualityAsked(), askedAfterMove, "the refused day is not asked")
    }

    /// After a restart on the mirror, the refusal the file kept for the server left behind is
    /// known: to an account that takes that quota over, and to a reload back to it.
    func testARestartOnTheMirrorKnowsTheRefusalOfTheServerLeft() throws {
        let log = RecordedLog()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-quota-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: storage) }
        let file = QuotaState.file(in: storage.path)
        let (left, mirror, now) = ("http://127.0.0.1:8080", "http://127.0.0.1:9090", 1_781_526_034.0)
        let before = QuotaAccount(
            provider: .openMeteo, url: left, quota: .unlimited, file: file, now: now, logger: log.logger)
        let quiet = before.beginQuietPeriod(reason: "open-meteo: HTTP 429: \(Self.daily)", until: now + 3600)

        let restarted = QuotaAccount(
            provider: .openMeteo, url: mirror, quota: .unlimited, file: file, now: now + 60, logger: log.logger)
        XCTAssertNil(restarted.quietPeriod, "the mirror starts afresh")
        let kept = try XCTUnwrap(restarted.kept { $1 == left })
        XCTAssertEqual(kept.quietPeriod?.until, quiet.until)
        XCTAssertNil(restarted.kept { $1 == "http://127.0.0.1:7070" })
        let airQuality = QuotaAccount(
            provider: .openMeteo, upstream: "open-meteo-air-quality", url: left, quota: .unlimited, file: nil,
            now: now + 60, logger: log.logger, carried: kept)
        XCTAssertEqual(airQuality.quietPeriod?.until, quiet.until)
        XCTAssertEqual(airQuality.quietPeriod?.description.hasPrefix("no requests to open-meteo-air-quality"), true)

        restarted.update(provider: .openMeteo, url: left, quota: .unlimited)
        XCTAssertEqual(restarted.quietPeriod?.until, quiet.until, "a reload back finds it")
    }

    /// The other way: the air quality alone on a server that refused it for the day, and a reload
    /// that moves the forecast there. The air quality joins the weather's account, and brings the
    /// refusal with it: the forecast does not ask that server before the day is over.
    func testAReloadOfTheForecastOntoTheAirQualitysRefusingServerKeepsTheRefusal() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        let (feed, config, refusing, forecastsAsked, quiet) = try startWithTheAirQualityRefusedAlone(rig)
        XCTAssertNil(rig.refresher.account.quietPeriod)

        var moved = config
        moved.provider = ProviderSettings(url: refusing.baseURL)
        rig.reload(to: moved, from: config)
        feed.apply(moved, previous: config)
        feed.feed.waitForQueuedWork()
        XCTAssertTrue(feed.account === rig.refresher.account, "one server, one quota")
        XCTAssertEqual(rig.refresher.account.quietPeriod?.until, quiet.until)
        rig.clock.advance(by: 60)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(forecastsAsked.withLockedValue { $0 }, 0, "the day's refusal holds the forecast too")

        // And back: the air quality alone on that server again still holds back.
        rig.reload(to: config, from: moved)
        feed.apply(config, previous: moved)
        feed.feed.waitForQueuedWork()
        XCTAssertFalse(feed.account === rig.refresher.account)
        XCTAssertEqual(feed.account.quietPeriod?.until, quiet.until, "its refusal went with it both ways")
    }

    /// The air quality alone on a server that refused it for the day moves to a server of its
    /// own; later the forecast moves onto the refusing server. The account the air quality left
    /// there is kept and still linked, so the forecast knows the refusal.
    func testAnAccountTheAirQualityLeftStillHoldsTheForecastOnItsServer() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        let (feed, config, refusing, forecastsAsked, quiet) = try startWithTheAirQualityRefusedAlone(rig)
        let (elsewhere, _) = try rig.mirror()
        defer { elsewhere.stop() }

        var away = config
        away.airQuality = AirQualitySettings(url: elsewhere.baseURL)
        rig.reload(to: away, from: config)
        feed.apply(away, previous: config)
        feed.feed.waitForQueuedWork()
        XCTAssertNil(feed.account.quietPeriod, "another server of its own")
        var moved = away
        moved.provider = ProviderSettings(url: refusing.baseURL)
        rig.reload(to: moved, from: away)
        feed.apply(moved, previous: away)
        XCTAssertEqual(rig.refresher.account.quietPeriod?.until, quiet.until, "the refusal the air quality left")
        rig.clock.advance(by: 60)
        rig.refresher.waitForQueuedWork()
        XCTAssertEqual(forecastsAsked.withLockedValue { $0 }, 0, "the refused day is not asked")
    }

    /// An account the air quality left is taken up again on a reload back, with what the
    /// forecast learned of its quota meanwhile: the forecast, moved onto that server while the
    /// air quality was elsewhere, was refused there for the day.
    func testAnAccountTakenUpAgainKnowsWhatTheForecastLearnedMeanwhile() throws {
        let rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
        defer { rig.stop() }
        let refusal = Array("{\"error\":true,\"reason\":\"\(Self.daily)\"}".utf8)
        let airQuality = try TestPaths.fixtureBytes("open-meteo-air-quality.json")
        let server = try ScriptedHTTPServer { head in
            head.uri.hasPrefix("/v1/air-quality")
                ? .respond(status: .ok, headers: [], body: airQuality)
                : .respond(status: .tooManyRequests, headers: [], body: refusal)
        }
        defer { server.stop() }
        let (feed, config) = rig.startWithAirQuality(at: server.baseURL)
        defer { feed.stop(timeout: 0.5) }
        let (elsewhere, _) = try rig.mirror()
        defer { elsewhere.stop() }
        // The air quality away, the forecast onto its server (refused there) and back, the air
        // quality back.
        var away = config
        away.airQuality = AirQualitySettings(url: elsewhere.baseURL)
        var forecastThere = away
        forecastThere.provider = ProviderSettings(url: server.baseURL)
        let steps = [config, away, forecastThere, away, config]
        for (previous, next) in zip(steps, steps.dropFirst()) {
            rig.reload(to: next, from: previous)
            feed.apply(next, previous: previous)
            rig.clock.advance(by: 0)
            rig.refresher.waitForQueuedWork()
            feed.feed.waitForQueuedWork()
        }
        let refused = QuietPeriod.lift(after: .day, now: rig.clock.now())
        XCTAssertEqual(feed.account.quietPeriod?.until, refused, "the forecast's refusal on the server taken up again")
    }

    /// A round trip to a mirror: the air quality's own account started with the calls the
    /// weather's knew of the public host, so taking it back in must not count those twice.
    func testARoundTripCountsTheCallsCarriedOverOnce() {
        let (host, mirror) = ("https://api.open-meteo.com", "http://mirror.internal")
        let quota = Quota(limits: [.day: 100])
        let weather = QuotaAccount(
            provider: .openMeteo, url: host, quota: quota, file: nil, now: 1_000, logger: RecordedLog().logger)
        weather.settle(weather.reserve(upTo: 2, callsPerPlace: 3, at: 1_000), spent: 6, at: 1_001)
        weather.update(provider: .openMeteo, url: mirror, quota: .unlimited)
        let own = QuotaAccount(
            provider: .openMeteo, url: host, quota: quota, file: nil, now: 1_002, logger: RecordedLog().logger,
            carried: weather.kept { $1 == host })
        XCTAssertEqual(own.spent(inLast: 86_400, at: 1_003), 6, "carried over")
        own.settle(own.reserve(upTo: 1, callsPerPlace: 1.6, at: 1_010), spent: 1.6, at: 1_011)

        weather.update(provider: .openMeteo, url: host, quota: quota)
        weather.absorb(own.kept { _, _ in true }!)
        XCTAssertEqual(weather.spent(inLast: 86_400, at: 1_100), 7.6, accuracy: 1e-9, "6 + 1.6, not 6 + 6 + 1.6")
    }
}
