import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

@testable import Cloudy

/// A `Refresher` on a `ManualClock`, fetching through the real libcurl client from a scripted
/// Open-Meteo (or OpenWeatherMap) on 127.0.0.1, with every request's clock time and place count,
/// and the refresher's log recorded. For the tests of quiet periods, pacing and network retries.
final class RefresherRig: @unchecked Sendable {
    /// One request the scripted upstream got: when (clock seconds), how many places, its URI.
    struct Asked {
        let time: Double
        let places: Int
        let uri: String
    }

    typealias Script = @Sendable (HTTPRequestHead) -> ScriptedHTTPServer.Answer

    let clock: ManualClock
    let log = RecordedLog()
    private let state: NIOLockedValueBox<(script: Script, asked: [Asked])>
    private(set) var server: ScriptedHTTPServer!
    private(set) var store: WeatherStore!
    private(set) var refresher: Refresher!
    let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-rig-\(UUID().uuidString)")
    /// One place's answer (the fixture's Berlin), repeated for a request of several places.
    let entry: String

    init(clock: ManualClock = ManualClock()) throws {
        self.clock = clock
        entry = String(decoding: try TestPaths.fixtureBytes("open-meteo-forecast.json"), as: UTF8.self)
        state = NIOLockedValueBox(({ _ in .hang }, []))
        answerForecasts()
        try serve()
    }

    /// (Re)starts the scripted server: on a free port, or on `port` to bring it back.
    func serve(port: Int = 0) throws {
        let state = self.state
        let clock = self.clock
        server = try ScriptedHTTPServer(port: port) { head in
            state.withLockedValue { state in
                state.asked.append(Asked(time: clock.now(), places: Self.placeCount(head.uri), uri: head.uri))
                return state.script(head)
            }
        }
    }

    /// The number of places a request asks for: the entries of its `latitude` (or one).
    static func placeCount(_ uri: String) -> Int {
        guard let range = uri.range(of: "latitude=") else { return 1 }
        return uri[range.upperBound...].prefix { $0 != "&" }.split(separator: ",").count
    }

    var asked: [Asked] { state.withLockedValue { $0.asked } }

    func answer(_ script: @escaping Script) {
        state.withLockedValue { $0.script = script }
    }

    /// 200 with one entry per place asked.
    func answerForecasts() {
        let entry = self.entry
        answer { head in
            let count = Self.placeCount(head.uri)
            let body = count == 1 ? entry : "[" + Array(repeating: entry, count: count).joined(separator: ",") + "]"
            return .respond(status: .ok, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }
    }

    /// Another Open-Meteo on a port of its own (a self-hosted instance, another quota) that
    /// answers every place asked; it records how many places each of its requests asked for.
    func mirror() throws -> (server: ScriptedHTTPServer, asked: NIOLockedValueBox<[Int]>) {
        let entry = self.entry
        let asked = NIOLockedValueBox<[Int]>([])
        let server = try ScriptedHTTPServer { head in
            let count = Self.placeCount(head.uri)
            asked.withLockedValue { $0.append(count) }
            let entries = Array(repeating: entry, count: count).joined(separator: ",")
            return .respond(status: .ok, headers: [], body: Array(("[" + entries + "]").utf8))
        }
        return (server, asked)
    }

    /// `status` with Open-Meteo's error body `{"error":true,"reason":…}`.
    func answer(status: HTTPResponseStatus, reason: String, headers: [(String, String)] = []) {
        let body = Array("{\"error\":true,\"reason\":\"\(reason)\"}".utf8)
        answer { _ in .respond(status: status, headers: headers, body: body) }
    }

    func config(places: Int, interval: Double = 60, url: String? = nil) -> Config {
        Config(
            provider: ProviderSettings(url: url ?? server.baseURL),
            refresh: RefreshSettings(interval: interval, timeout: 5, staleAfter: 86400 * 2),
            places: (0..<places).map {
                Place(name: "Place \($0)", latitude: -60 + Double($0) * 0.01, longitude: 13.41)
            })
    }

    /// One place with coordinates and a `city:` place ("Springfield") for each of `cities`,
    /// looked up at `geocoder`, every minute.
    func config(cities: [String], geocoder: String) -> Config {
        var config = config(places: 1, interval: 60)
        config.geocodingURL = geocoder
        config.places += cities.map { Place(name: $0, city: CitySearch(query: "Springfield")) }
        return config
    }

    /// Starts a refresher on `config`, under `budget` (none: `CallBudget.of`, no quota today);
    /// with `starting` false it is only built.
    func start(_ config: Config, budget: CallBudget? = nil, jitter: Double = 0.5, starting: Bool = true) {
        store = WeatherStore(
            config: config, telemetry: ExporterTelemetry(startedAt: clock.now()),
            telemetryPath: "/metrics", now: clock.now(), processMetrics: { MetricFamilies() })
        refresher = Refresher(
            store: store, client: CurlHTTPClient(userAgent: "cloudy-tests"), storagePath: storage.path,
            logger: log.logger, clock: clock, jitter: { jitter },
            callBudget: { budget ?? CallBudget.of($0) })
        if starting { refresher.start() }
    }

    /// A reload as ConfigReloader does it: the store takes the new config, the refresher
    /// reschedules, the pages are rendered.
    func reload(to config: Config, from previous: Config) {
        store.replaceConfig(config)
        refresher.apply(config, previous: previous)
        refresher.waitForQueuedWork()
        store.render(now: clock.now())
    }

    func stop() {
        refresher?.stop()
        server.stop()
        try? FileManager.default.removeItem(at: storage)
    }

    var nextRefreshIn: Double? { refresher.nextRefresh.map { $0 - clock.now() } }
    var readyz: String { store.rendered.readiness.answer }
    var landing: String { String(buffer: store.rendered.html.landing) }
    var placesUp: Int { store.statuses.filter(\.isUp).count }
    var placesWithWeather: Int { store.statuses.filter { $0.lastSuccess != nil }.count }
}

extension RefresherRig {
    /// One place every 10 minutes with its air quality at `url`: the refresher and the air-quality
    /// feed started and their first steps taken. The caller stops the feed. `ownQuotaFile`: where
    /// an account of its own is kept (nil: in memory).
    func startWithAirQuality(at url: String, ownQuotaFile: URL? = nil) -> (AirQualityFeed, Config) {
        var config = config(places: 1, interval: 600)
        config.airQuality = AirQualitySettings(url: url)
        start(config)
        let feed = AirQualityFeed(
            config: config, store: store, weather: refresher, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            logger: log.logger, clock: clock, ownQuotaFile: ownQuotaFile)
        feed.start()
        clock.advance(by: 0)
        feed.feed.waitForQueuedWork()
        return (feed, config)
    }
}
