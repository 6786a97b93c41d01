import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// A 200 whose body cannot be read is counted in `cloudy_exporter_upstream_requests_total` as
/// `code="decode"`, not as a success, by every upstream that asks one place per request (the
/// warning services, OpenWeatherMap's, MET Norway's and Dark Sky's forecasts, OpenWeatherMap's
/// air pollution, the geocoder), as by Open-Meteo's batches (`ResilienceTests`): through the real
/// libcurl client to a scripted server on 127.0.0.1 that answers a half-written JSON document.
final class UndecodableAnswerTests: XCTestCase {
    let asked = NIOLockedValueBox<[HTTPRequestHead]>([])
    let reply = NIOLockedValueBox<(HTTPResponseStatus, [(String, String)], [UInt8])>(
        (.ok, [("Content-Type", "application/json")], Array(#"{"coord":{"lon":13.41,"#.utf8)))
    var server: ScriptedHTTPServer!
    let log = RecordedLog()
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    override func setUpWithError() throws {
        server = try ScriptedHTTPServer(answering: reply, recordingInto: asked)
    }

    override func tearDown() {
        server.stop()
    }

    /// Runs `source` against the server with a telemetry of its own: whether its one place
    /// failed, and the requests it counted under `label`, by code.
    func outcome<Report>(
        _ label: String, _ source: (Upstream) -> [Result<Report, WeatherFetchError>]
    ) -> (label: String, failed: Bool, codes: [String: Int]) {
        let telemetry = ExporterTelemetry(startedAt: 0)
        let upstream = Upstream(
            baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: "cloudy-tests ops@example.org"),
            recorder: telemetry)
        let outcomes = source(upstream)
        return (label, outcomes.count == 1 && (try? outcomes[0].get()) == nil, telemetry.upstreamCodes(provider: label))
    }

    func testEveryPlaceByPlaceUpstreamCountsAnAnswerItCannotReadAsDecode() {
        let (forecast, key, logger, place) = (
            ForecastSettings(days: 3, hours: 2), Secret("test-key"), log.logger, [berlin]
        )
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-decode-\(UUID())")
        defer { try? FileManager.default.removeItem(at: storage) }
        let berlinByName = Place(name: "Berlin", city: CitySearch(query: "Berlin", country: nil))
        let outcomes = [
            outcome("openweathermap") {
                OpenWeatherMapProvider($0, apiKey: key, forecast: forecast).fetch(place, logger: logger)
            },
            outcome("openweathermap") {
                OpenWeatherMapProvider($0, apiKey: key, forecast: forecast, oneCall: true).fetch(place, logger: logger)
            },
            outcome("met-norway") {
                METNorwayProvider($0, forecast: forecast, logger: logger).fetch(place, logger: logger)
            },
            outcome("dark-sky") { DarkSkyProvider($0, apiKey: key, forecast: forecast).fetch(place, logger: logger) },
            outcome("openweathermap-air-pollution") {
                OpenWeatherMapAirPollution($0, key: key, callsCountedAs: nil).fetch(place, logger: logger)
            },
            outcome("nws") { NWSWarnings($0).fetch(place, logger: logger) },
            outcome("dwd") { DWDWarnings($0).fetch(place, logger: logger) },
            outcome("met-norway-metalerts") { METNorwayWarnings($0, logger: logger).fetch(place, logger: logger) },
            outcome("geocoding") {
                Geocoder(
                    baseURL: $0.baseURL, storagePath: storage.path, client: $0.client, recorder: $0.recorder,
                    logger: logger
                ).locateWaiting([berlinByName], now: 0, retryInterval: 60)
            },
        ]
        for (index, outcome) in outcomes.enumerated() {
            XCTAssertTrue(outcome.failed, "case \(index) (\(outcome.label)): the place fails")
            XCTAssertEqual(outcome.codes, ["decode": 1], "case \(index) (\(outcome.label))")
        }
        XCTAssertEqual(
            asked.withLockedValue { $0.count }, outcomes.count,
            "one request each: OpenWeatherMap asks no forecast after a current weather it cannot read")
    }
}

extension UndecodableAnswerTests {
    /// A 204 (a proxy's empty answer) to an Open-Meteo batch is a 2xx with nothing to read:
    /// `decode` at the full weight, as metrics.md has it, not an HTTP error's one call.
    func testOpenMeteoCountsAnEmpty2xxAsDecodeAtFullWeight() {
        reply.withLockedValue { $0 = (.noContent, [], []) }
        let telemetry = ExporterTelemetry(startedAt: 0)
        let provider = OpenMeteoProvider(
            Upstream(
                baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: "cloudy-tests"),
                recorder: telemetry),
            forecast: ForecastSettings(days: 3, hours: 2))
        let outcomes = provider.fetch(
            [berlin, Place(name: "Oslo", latitude: 59.91, longitude: 10.75)], logger: log.logger)
        XCTAssertEqual(outcomes.filter { (try? $0.get()) == nil }.count, 2, "both places fail")
        XCTAssertEqual(telemetry.upstreamCodes(provider: "open-meteo"), ["decode": 1])
        XCTAssertEqual(
            telemetry.callCount(provider: .openMeteo), 2 * CallCost.openMeteo(ForecastSettings(days: 3, hours: 2)),
            accuracy: 1e-9)
    }
}
