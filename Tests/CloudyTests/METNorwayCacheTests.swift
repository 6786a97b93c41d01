import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// MET Norway's terms, in process and without waiting: through the real libcurl client to a
/// scripted server on 127.0.0.1, with time on a `ManualClock`. No request before the last
/// answer's `Expires`; then `If-Modified-Since` with the last `Last-Modified`, and a 304 keeps
/// the data; a 203 is logged once; a 403 says why and stops the refresh.
final class METNorwayCacheTests: XCTestCase {
    let clock = ManualClock()
    let telemetry = ExporterTelemetry(startedAt: 0)
    let log = RecordedLog()
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41, timezone: "Europe/Berlin")
    /// The request heads the server saw, oldest first.
    let asked = NIOLockedValueBox<[HTTPRequestHead]>([])
    /// What the server answers next: status, headers, body.
    let reply = NIOLockedValueBox<(HTTPResponseStatus, [(String, String)], [UInt8])>((.ok, [], []))
    var server: ScriptedHTTPServer!
    var fixture: [UInt8] = []

    override func setUpWithError() throws {
        fixture = try TestPaths.fixtureBytes("met-no-compact.json")
        server = try ScriptedHTTPServer(answering: reply, recordingInto: asked)
    }

    override func tearDown() {
        server.stop()
    }

    func provider() -> METNorwayProvider {
        METNorwayProvider(
            Upstream(
                baseURL: server.baseURL, timeout: 5,
                client: CurlHTTPClient(userAgent: "cloudy-tests/1.0 ops@example.org"),
                recorder: telemetry, clock: clock),
            forecast: ForecastSettings(days: 7, hours: 24), logger: log.logger)
    }

    /// The server's next answer; `expiresIn` seconds from the clock's now become `Expires`.
    func answer(_ status: HTTPResponseStatus, expiresIn: Double?, lastModified: String? = nil, body: [UInt8]? = nil) {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let expiresIn {
            headers.append(("Expires", HTTPDate.format(Date(timeIntervalSince1970: clock.now() + expiresIn))))
        }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        reply.withLockedValue { $0 = (status, headers, body ?? (status == .notModified ? [] : fixture)) }
    }

    var requestCount: Int { asked.withLockedValue { $0.count } }
    var lastIfModifiedSince: String? { asked.withLockedValue { $0.last?.headers.first(name: "If-Modified-Since") } }

    func testNoRequestBeforeExpiresThenIfModifiedSinceAndA304KeepsTheData() throws {
        let firstModified = "Mon, 15 Jun 2026 11:55:00 GMT"
        answer(.ok, expiresIn: 600, lastModified: firstModified)
        let provider = provider()
        let first = try provider.fetch(berlin).get()
        XCTAssertEqual(first.current.temperatureCelsius, 24.8)
        XCTAssertEqual(requestCount, 1)
        XCTAssertNil(lastIfModifiedSince, "nothing to compare with yet")
        let uri = try XCTUnwrap(asked.withLockedValue { $0.first?.uri })
        XCTAssertEqual(uri, "/weatherapi/locationforecast/2.0/compact?lat=52.52&lon=13.41")

        clock.advance(by: 599)
        XCTAssertEqual(try provider.fetch(berlin).get(), first)
        XCTAssertEqual(requestCount, 1, "no request before Expires")

        clock.advance(by: 1)
        answer(.notModified, expiresIn: 900)
        XCTAssertEqual(try provider.fetch(berlin).get(), first, "a 304 keeps the data")
        XCTAssertEqual(requestCount, 2, "asked again at Expires")
        XCTAssertEqual(lastIfModifiedSince, firstModified, "with the last Last-Modified")
        XCTAssertEqual(telemetry.upstreamCount(provider: .metNorway, code: "304"), 1)
        XCTAssertEqual(telemetry.upstreamCount(provider: .metNorway, code: "200"), 1)

        clock.advance(by: 899)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 2, "the 304's Expires counts")

        // New data without an Expires: cached for 30 minutes (less the moment a refresh due then
        // may start sooner, `FairUse.spacingTolerance`); its Last-Modified is asked next.
        clock.advance(by: 1)
        answer(.ok, expiresIn: nil, lastModified: "Mon, 15 Jun 2026 12:20:00 GMT")
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 3)
        XCTAssertEqual(lastIfModifiedSince, firstModified)
        clock.advance(by: 1800 - FairUse.spacingTolerance - 0.001)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 3, "no Expires: 30 minutes")
        clock.advance(by: 0.001)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 4)
        XCTAssertEqual(lastIfModifiedSince, "Mon, 15 Jun 2026 12:20:00 GMT")
    }

    /// An answer kept (its `Expires`, then a 304) is read at the clock's moment: at 14:40Z the
    /// current conditions are the 14:00Z step's and hour 1 is 15:00Z, not the first step's 12:00Z
    /// and 13:00Z; so on the same answer's second day, day 0 is that day.
    func testAKeptAnswerIsReadAtTheClocksHour() throws {
        answer(.ok, expiresIn: 3600, lastModified: "Mon, 15 Jun 2026 11:55:00 GMT")
        let provider = provider()
        let fresh = try provider.fetch(berlin).get()
        XCTAssertEqual(fresh.current.observedAt, 1_781_524_800, "12:00Z, the clock's hour")
        XCTAssertEqual(fresh.hourly.first?.time, 1_781_524_800 + 3600)

        clock.advance(by: 2 * 3600 + 40 * 60)  // 14:40Z
        answer(.notModified, expiresIn: 1800)
        let kept = try provider.fetch(berlin).get()
        XCTAssertEqual(requestCount, 2)
        XCTAssertEqual(kept.current.observedAt, 1_781_524_800 + 2 * 3600, "the 14:00Z step")
        XCTAssertEqual(kept.current.temperatureCelsius, 24.9)
        XCTAssertEqual(kept.hourly.first?.hoursAhead, 1)
        XCTAssertEqual(kept.hourly.first?.time, 1_781_524_800 + 3 * 3600, "hour 1 is 15:00Z")
        XCTAssertEqual(kept.hourly.first?.temperatureCelsius, 24.4)
        XCTAssertEqual(kept.daily.first?.temperatureMaxCelsius, 24.9, "today's whole day, hours past too")
    }

    func testAnExpiresBeyondAnHourIsReadAsAnHour() throws {
        answer(.ok, expiresIn: 253_402_300_799 - clock.now())  // Fri, 31 Dec 9999 23:59:59 GMT
        let provider = provider()
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        clock.advance(by: 3599)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 1)
        clock.advance(by: 1)
        XCTAssertNoThrow(try provider.fetch(berlin).get())
        XCTAssertEqual(requestCount, 2, "asked again after an hour, not never")
    }

    func testMovedCoordinatesAskAtOnce() throws {
        answer(.ok, expiresIn: 600, lastModified: "Mon, 15 Jun 2026 11:55:00 GMT")
        let provider = provider()
        for latitude in [52.52, 52.53] {
            XCTAssertNoThrow(try provider.fetch(Place(name: "Berlin", latitude: latitude, longitude: 13.41)).get())
        }
        XCTAssertEqual(
            asked.withLockedValue { $0.map(\.uri) },
            [
                "/weatherapi/locationforecast/2.0/compact?lat=52.52&lon=13.41",
                "/weatherapi/locationforecast/2.0/compact?lat=52.53&lon=13.41",
            ], "another URL is another answer")
        XCTAssertNil(lastIfModifiedSince, "the old place's Last-Modified says nothing of the new one")
    }

    /// A reload that gives the place another zone reads its forecast anew: the kept snapshot's
    /// days were counted in the old one.
    func testAnotherZoneAsksAtOnce() throws {
        answer(.ok, expiresIn: 600, lastModified: "Mon, 15 Jun 2026 11:55:00 GMT")
        let provider = provider()
        XCTAssertEqual(try provider.fetch(berlin).get().timezone, "Europe/Berlin")
        var elsewhere = berlin
        elsewhere.timezone = "Asia/Tokyo"
        XCTAssertEqual(try provider.fetch(elsewhere).get().timezone, "Asia/Tokyo")
        XCTAssertEqual(asked.withLockedValue { $0.count }, 2, "before Expires, for the new zone only")
    }

    func testA304WithoutAnEarlierAnswerFails() {
        answer(.notModified, expiresIn: 600)
        XCTAssertThrowsError(try provider().fetch(berlin).get()) { error in
            XCTAssertEqual("\(error)", "met-norway: 304 without an earlier answer")
        }
    }

    func testA203IsLoggedOnceAndTheMissingZoneOncePerPlace() throws {
        answer(.nonAuthoritativeInformation, expiresIn: 0)
        var solar = berlin
        solar.timezone = nil
        let provider = provider()
        XCTAssertEqual(try provider.fetch(solar).get().utcOffsetSeconds, 3600)
        XCTAssertNoThrow(try provider.fetch(solar).get())
        XCTAssertNoThrow(try provider.fetch(solar).get())
        XCTAssertEqual(requestCount, 3, "an Expires of now asks every time")
        let deprecations = log.entries(containing: "answers 203")
        XCTAssertEqual(deprecations.count, 1, "\(log.all.map(\.message))")
        XCTAssertEqual(deprecations.first?.level, .warning)
        XCTAssertEqual(
            deprecations.first?.message,
            "met-norway answers 203: this product version is deprecated or beta; "
                + "check api.met.no for its successor")
        let solarOffsets = log.entries(containing: "solar offset")
        XCTAssertEqual(solarOffsets.count, 1)
        XCTAssertEqual(solarOffsets.first?.metadata["utc_offset_hours"], "1")
        XCTAssertEqual(solarOffsets.first?.metadata["location"], "Berlin")
    }

    func testRefusalsSayWhyAndReadRetryAfterByTheInjectedClock() {
        reply.withLockedValue {
            $0 = (.forbidden, [("Retry-After", HTTPDate.format(Date(timeIntervalSince1970: clock.now() + 120)))], [])
        }
        let provider = provider()
        guard case .failure(let forbidden) = provider.fetch(berlin) else { return XCTFail("a 403 is a failure") }
        XCTAssertEqual(
            forbidden.message,
            "met-norway: HTTP 403 (MET refuses this User-Agent or has blocked this client)")
        XCTAssertTrue(forbidden.isRateLimit, "no more requests to MET in this refresh")
        XCTAssertEqual(forbidden.retryAfter, 120, "the HTTP date is read against the clock's now")

        reply.withLockedValue { $0 = (.serviceUnavailable, [("Retry-After", "30")], []) }
        guard case .failure(let unavailable) = provider.fetch(berlin) else { return XCTFail("a 503 is a failure") }
        XCTAssertEqual(unavailable.message, "met-norway: HTTP 503")
        XCTAssertFalse(unavailable.isRateLimit)
        XCTAssertEqual(unavailable.retryAfter, 30)
        XCTAssertEqual(requestCount, 2, "failures are not cached")
        XCTAssertEqual(telemetry.upstreamCount(provider: .metNorway, code: "403"), 1)
    }
}
