import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// OpenWeatherMap's call budget, in process and without waiting: through the real libcurl
/// client to a scripted server on 127.0.0.1, with time on a `ManualClock`. A place keeps its
/// last good answer for ten minutes without a call, unless its coordinates moved.
final class OpenWeatherMapCallSpacingTests: XCTestCase {
    let clock = ManualClock()
    let telemetry = ExporterTelemetry(startedAt: 0)
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
    let paris = Place(name: "Paris", latitude: 48.8566, longitude: 2.3522)
    /// The URIs asked for, oldest first.
    let asked = NIOLockedValueBox<[String]>([])
    /// When set, every request gets this status with an error body naming the key.
    let refusal = NIOLockedValueBox<HTTPResponseStatus?>(nil)
    var server: ScriptedHTTPServer!

    override func setUpWithError() throws {
        var bodies: [String: [UInt8]] = [:]
        for (path, fixture) in [
            ("/data/2.5/weather", "openweathermap-current.json"),
            ("/data/2.5/forecast", "openweathermap-forecast.json"),
            ("/data/3.0/onecall", "openweathermap-onecall.json"),
        ] {
            bodies[path] = try TestPaths.fixtureBytes(fixture)
        }
        let asked = self.asked
        let refusal = self.refusal
        let answers = bodies
        server = try ScriptedHTTPServer { head in
            let path = String(head.uri.prefix { $0 != "?" })
            asked.withLockedValue { $0.append(head.uri) }
            if let status = refusal.withLockedValue({ $0 }) {
                let body = "{\"cod\":\(status.code),\"message\":\"refused owm-test-key\"}"
                return .respond(
                    status: status, headers: [("Retry-After", "Mon, 15 Jun 2026 12:01:30 GMT")],
                    body: Array(body.utf8))
            }
            return .respond(status: .ok, headers: [("Content-Type", "application/json")], body: answers[path] ?? [])
        }
    }

    override func tearDown() {
        server.stop()
    }

    func provider(oneCall: Bool = false) -> OpenWeatherMapProvider {
        OpenWeatherMapProvider(
            Upstream(
                baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: "cloudy-tests"),
                recorder: telemetry, clock: clock),
            apiKey: Secret("owm-test-key"), forecast: ForecastSettings(days: 7, hours: 24), oneCall: oneCall)
    }

    var requestCount: Int { asked.withLockedValue { $0.count } }
    var paths: [String] { asked.withLockedValue { $0.map { String($0.prefix { $0 != "?" }) } } }

    func testNoSecondCallWithinTenMinutesAndACallAfter() throws {
        let provider = provider()
        let first = provider.fetch([berlin, paris], logger: .init(label: "test"))
        XCTAssertEqual(try first.map { try $0.get().current.temperatureCelsius }, [24.52, 24.52])
        XCTAssertEqual(
            paths.sorted(),
            ["/data/2.5/forecast", "/data/2.5/forecast", "/data/2.5/weather", "/data/2.5/weather"],
            "both endpoints once per place")

        // A refresh due 600 s later may start a moment sooner than 600 s after the last batch
        // (timers, the place's turn in its batch): within `FairUse.spacingTolerance` it asks.
        let tolerance = FairUse.spacingTolerance
        clock.advance(by: OpenWeatherMapProvider.minimumCallSpacing - tolerance - 0.001)
        let kept = provider.fetch([berlin, paris], logger: .init(label: "test"))
        XCTAssertEqual(try kept.map { try $0.get() }, try first.map { try $0.get() }, "the last answer, kept")
        XCTAssertEqual(requestCount, 4, "no call within 600 s")

        clock.advance(by: 0.001)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 6, "called again once the 600 s are up")
        XCTAssertEqual(telemetry.upstreamCount(provider: .openWeatherMap, code: "200"), 6)
    }

    func testMovedCoordinatesAreFetchedAtOnce() throws {
        let provider = provider()
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        var moved = berlin
        moved.longitude = 13.5
        XCTAssertNoThrow(try provider.fetch(moved).get())
        XCTAssertEqual(requestCount, 4, "a place that moved is asked again within the 600 s")
        let uri = try XCTUnwrap(asked.withLockedValue { $0.last })
        XCTAssertTrue(uri.contains("?lat=52.52&lon=13.5&units=metric&appid=owm-test-key"), uri)
        XCTAssertNoThrow(try provider.fetch(moved).get())
        XCTAssertEqual(requestCount, 4, "and then kept like any other")
    }

    /// A place given another zone is asked again at once: its days are counted in that zone.
    func testAnotherZoneIsFetchedAtOnce() throws {
        let provider = provider()
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        var zoned = berlin
        zoned.timezone = "America/Guayaquil"
        XCTAssertEqual(try provider.fetch(zoned).get().timezone, "America/Guayaquil")
        XCTAssertEqual(requestCount, 4, "both endpoints again, within the 600 s")
    }

    /// A refused current weather is not followed by the forecast's request: the place costs
    /// the quota the one call made, not both endpoints'.
    func testARefusedCurrentWeatherCostsOneCall() {
        refusal.withLockedValue { $0 = .internalServerError }
        guard case .failure(let error) = provider().fetch([berlin], logger: .init(label: "test"))[0] else {
            return XCTFail("a 500 is a failure")
        }
        XCTAssertEqual(error.calls, 1)
        XCTAssertEqual(paths, ["/data/2.5/weather"])
    }

    func testOneCallIsSpacedTheSameWay() throws {
        let provider = provider(oneCall: true)
        XCTAssertEqual(try provider.fetch(berlin).get().current.dewPointCelsius, 10.4)
        clock.advance(by: 597)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(paths, ["/data/3.0/onecall"], "one request per place, then none")
        clock.advance(by: 1)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 2)
    }

    func testFailuresAreNotKeptAndNeverShowTheKey() throws {
        refusal.withLockedValue { $0 = .tooManyRequests }
        let provider = provider()
        guard case .failure(let limited) = provider.fetch(berlin) else { return XCTFail("a 429 is a failure") }
        XCTAssertEqual(limited.message, "openweathermap: HTTP 429: refused <redacted>")
        XCTAssertTrue(limited.isRateLimit)
        XCTAssertEqual(limited.retryAfter, 90, "the HTTP date is read against the clock's now")
        XCTAssertEqual(requestCount, 1, "the forecast is not asked after the current weather failed")

        refusal.withLockedValue { $0 = .unauthorized }
        guard case .failure(let unauthorized) = provider.fetch(berlin) else { return XCTFail("a 401 is a failure") }
        XCTAssertEqual(unauthorized.message, "openweathermap: invalid API key (HTTP 401)")
        XCTAssertNil(unauthorized.retryAfter)

        refusal.withLockedValue { $0 = nil }
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 4, "a failure leaves nothing to keep: asked again at once")
        XCTAssertEqual(telemetry.upstreamCount(provider: .openWeatherMap, code: "429"), 1)
        XCTAssertEqual(telemetry.upstreamCount(provider: .openWeatherMap, code: "401"), 1)
    }
}
