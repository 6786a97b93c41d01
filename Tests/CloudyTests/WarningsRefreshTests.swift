import Foundation
import XCTest

@testable import Cloudy

/// The warning sources end to end against the fake services (`Tests/Fakes/`, a real process)
/// through the libcurl client, their `WarningRecorder` into the store and onto the rendered page,
/// doing by hand what the `Feed` does on its timer: an update that replaces an alert, an expiry
/// while still listed, a source down, a place outside every area.
final class WarningsRefreshTests: FakeWeatherTestCase {
    let clock = ManualClock()
    let log = RecordedLog()

    /// One refresh of `source` as the feed runs it: its schedule's places asked, the outcomes
    /// recorded, the page rendered; the failures returned.
    @discardableResult
    func refresh(_ source: any WarningSource, _ store: WeatherStore) -> [WeatherFetchError] {
        let recorder = WarningRecorder(store: store, source: source.name)
        let places = store.config.warnings.schedule(source.name, places: store.config.places).places
        guard !places.isEmpty else { return [] }
        let outcomes = source.fetch(places, logger: log.logger)
        recorder.record(zip(places, outcomes).map { (place: $0, location: $0, outcome: $1) }, at: clock.now())
        recorder.render(now: clock.now())
        return outcomes.compactMap { if case .failure(let error) = $0 { error } else { nil } }
    }

    func setUp(places: [Place], sources: [WarningSourceName]) -> (WeatherStore, [any WarningSource]) {
        var config = Config(places: places)
        config.provider.userAgent = "cloudy-tests/1.0 ops@example.org"
        config.refresh.staleAfter = 86400  // a day: these tests follow the warnings' own expiries
        config.warnings = WarningSettings(sources: sources.map { WarningSourceSettings(name: $0, url: fake.baseURL) })
        let telemetry = ExporterTelemetry(startedAt: clock.now())
        let store = WeatherStore(
            config: config, telemetry: telemetry, telemetryPath: "/metrics", now: clock.now(),
            processMetrics: { MetricFamilies() })
        let made = WarningSources.make(
            config.warnings, timeout: RequestTimeout(5), client: CurlHTTPClient(userAgent: config.provider.userAgent!),
            recorder: telemetry, clock: clock, logger: log.logger)
        return (store, made)
    }

    func lines(_ store: WeatherStore, _ prefix: String) -> [String] {
        String(buffer: store.rendered.metrics.prometheus).split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix(prefix) }
    }

    func testAnUpdateReplacesTheAlertAndADownSourceKeepsItsList() throws {
        let gottingen = Place(name: "Göttingen", latitude: 51.55, longitude: 9.9)
        let (store, sources) = setUp(places: [gottingen], sources: [.dwd])
        XCTAssertEqual(refresh(sources[0], store).count, 0)
        XCTAssertEqual(
            lines(store, "weather_warnings{").filter { $0.hasSuffix(" 1") },
            [#"weather_warnings{location="Göttingen",severity="minor"} 1"#])

        // DWD re-issues the warning one level up under a new id: one series, the new one.
        let oldID = "2.49.0.0.276.0.DWD.PVW.1781518320000.079cce9d-6c39-4cfb-ad25-143ac9bbda2c"
        try fake.control(
            "warnings",
            #"{"source":"dwd","update":{"id":"\#(oldID)","set":{"alert_id":"2.49.0.0.276.0.DWD.PVW.2","severity":"moderate"}}}"#
        )
        clock.advance(by: 300)
        refresh(sources[0], store)
        let info = lines(store, "weather_warning_info")
        XCTAssertEqual(info.count, 1)
        XCTAssertTrue(
            info[0].contains(#"id="2.49.0.0.276.0.DWD.PVW.2""#) && info[0].contains(#"severity="moderate""#), info[0])

        try fake.control("warnings", #"{"source":"dwd","fail":503}"#)
        clock.advance(by: 300)
        XCTAssertEqual(refresh(sources[0], store).map(\.message), ["dwd: HTTP 503"])
        XCTAssertEqual(
            lines(store, "weather_warnings_up"), [#"weather_warnings_up{location="Göttingen",source="dwd"} 0"#])
        XCTAssertEqual(lines(store, "weather_warning_info").count, 1, "kept while the source is down")

        // The warning expires at 19:00 UTC while the source is still down: it leaves then.
        let recorder = WarningRecorder(store: store, source: .dwd)
        let deadline = try XCTUnwrap(recorder.nextStaleDeadline(), "the feed's stale timer arms on it")
        XCTAssertEqual(deadline, 1_781_550_000)
        clock.advance(by: deadline - clock.now())
        recorder.render(now: clock.now())
        XCTAssertEqual(lines(store, "weather_warning_info"), [])
        XCTAssertEqual(lines(store, "weather_warnings{").filter { $0.hasSuffix(" 0") }.count, 5)
    }

    func testAnExpiryWhileStillListedAndNoRequestOutsideEveryArea() throws {
        let oslo = Place(name: "Oslo", latitude: 59.9139, longitude: 10.7522)
        let brussels = Place(name: "Brussels", latitude: 50.85, longitude: 4.35)
        let (store, sources) = setUp(places: [oslo, brussels], sources: [.metNorway, .nws])
        for source in sources { refresh(source, store) }
        let asked = try fake.requests().compactMap { $0["path"] as? String }
        XCTAssertEqual(asked, ["/weatherapi/metalerts/2.0/current.json"], "Brussels asks nothing, NWS is not asked")
        XCTAssertEqual(lines(store, "weather_warning_info").count, 2)
        XCTAssertFalse(lines(store, "weather_warning").contains { $0.contains("Brussels") })

        // The lightning warning expires at 21:00 UTC; the fake still lists it.
        clock.advance(by: 1_781_557_200 - clock.now())
        refresh(sources[0], store)
        let info = lines(store, "weather_warning_info")
        XCTAssertEqual(info.count, 1)
        XCTAssertTrue(info[0].contains("High forest fire danger"), info[0])
    }
}

extension WarningsRefreshTests {
    /// `--config.check` says that a warning source's public host raises `warnings.interval`, as
    /// it says so of `refresh.interval`, and says nothing of it against a mirror.
    func testTheConfigCheckSaysWhenTheWarningsIntervalIsRaised() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("warnings-\(UUID()).yml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let yaml = """
            warnings:
              interval: 5s
              sources: [{name: nws}]
            locations:
              - {name: New York, latitude: 40.7143, longitude: -74.006}

            """
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(
            check.stdout.contains("warnings.interval raised to the warning sources' fair-use minimum, 1m\n"),
            check.stdout)

        try yaml.replacingOccurrences(of: "{name: nws}", with: "{name: nws, url: \"http://127.0.0.1:9\"}").write(
            toFile: file, atomically: true, encoding: .utf8)
        let mirror = try runProgram(TestPaths.exporterBinary.path, ["--config.check", "--config.file", file])
        XCTAssertEqual(mirror.status, 0, mirror.stderr)
        XCTAssertFalse(mirror.stdout.contains("warnings.interval"), mirror.stdout)
    }
}
