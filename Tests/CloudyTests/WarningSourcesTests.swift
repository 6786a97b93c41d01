import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The three warning sources through the real libcurl client against a scripted server on
/// 127.0.0.1 answering with the reference's fixtures: request paths and headers (User-Agent on
/// every one), MET's `Expires` and `If-Modified-Since`, outside-the-area answers read as no
/// warnings, failures as failures.
final class WarningSourcesTests: XCTestCase {
    let clock = ManualClock()
    let telemetry = ExporterTelemetry(startedAt: 0)
    let log = RecordedLog()
    let asked = NIOLockedValueBox<[HTTPRequestHead]>([])
    let reply = NIOLockedValueBox<(HTTPResponseStatus, [(String, String)], [UInt8])>((.ok, [], []))
    var server: ScriptedHTTPServer!
    static let agent = "cloudy-tests/1.0 ops@example.org"
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006)
    let oslo = Place(name: "Oslo", latitude: 59.9139, longitude: 10.7522)
    let gottingen = Place(name: "Göttingen", latitude: 51.55, longitude: 9.9)

    override func setUpWithError() throws {
        server = try ScriptedHTTPServer(answering: reply, recordingInto: asked)
    }

    override func tearDown() {
        server.stop()
    }

    var upstream: Upstream {
        Upstream(
            baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: Self.agent), recorder: telemetry,
            clock: clock)
    }

    func answer(_ status: HTTPResponseStatus, fixture: String?, headers: [(String, String)] = []) throws {
        let body = try fixture.map { try TestPaths.fixtureBytes($0) } ?? []
        reply.withLockedValue { $0 = (status, [("Content-Type", "application/json")] + headers, body) }
    }

    var requests: [HTTPRequestHead] { asked.withLockedValue { $0 } }

    func testNWSAsksForThePointWithUserAgentAndGeoJSON() throws {
        try answer(.ok, fixture: "nws-alerts-active.json")
        let outcomes = NWSWarnings(upstream).fetch([newYork], logger: log.logger)
        XCTAssertEqual(try outcomes[0].get().map(\.event), ["Heat Advisory", "Air Quality Alert"])
        XCTAssertEqual(requests.map(\.uri), ["/alerts/active?point=40.7143,-74.006"])
        XCTAssertEqual(requests[0].headers.first(name: "User-Agent"), Self.agent)
        XCTAssertEqual(requests[0].headers.first(name: "Accept"), "application/geo+json")
    }

    func testNWSFailuresAreFailuresAndA404IsNoCoverage() throws {
        try answer(.serviceUnavailable, fixture: nil)
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get()) {
            XCTAssertEqual("\($0)", "nws: HTTP 503")
        }
        try answer(.forbidden, fixture: nil)
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get()) {
            XCTAssertEqual("\($0)", "nws: HTTP 403 (NWS refuses this User-Agent)")
        }
        try answer(.ok, fixture: "brightsky-alerts.json")
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), "not GeoJSON")
        // The service's own 404 is a problem document; another server's page is a failure.
        problem(#"{"type":"https://api.weather.gov/problems/InvalidPoint","title":"Invalid Point","status":404}"#)
        XCTAssertEqual(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), [])
        XCTAssertEqual(telemetry.requestsOnThePage("nws", code: "outside_area"), 1, "no failure, and said so")
        // Its problem for a path it does not have (`url: https://api.weather.gov/alerts`) is one.
        problem(
            #"{"type":"https://api.weather.gov/problems/NotFound","title":"Not Found","status":404,"#
                + #""detail":"'/alerts/alerts/active' is not a valid resource path"}"#)
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), "wrong path") {
            XCTAssertEqual(
                "\($0)", "nws: HTTP 404: '/alerts/alerts/active' is not a valid resource path (check the source's url:)"
            )
        }
        // Its NotFound with no more to say is its "no data", as it may answer outside its area.
        problem(#"{"type":"https://api.weather.gov/problems/NotFound","title":"Not Found","detail":"Not Found"}"#)
        XCTAssertEqual(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), [])
        reply.withLockedValue { $0 = (.notFound, [("Content-Type", "text/html")], Array("<h1>Not Found</h1>".utf8)) }
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), "a wrong url:") {
            XCTAssertEqual("\($0)", "nws: HTTP 404")
        }
        // Another server's JSON 404 with a title is no problem document of the service's either.
        reply.withLockedValue {
            $0 = (.notFound, [("Content-Type", "application/json")], Array(#"{"title":"Not Found"}"#.utf8))
        }
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), "JSON 404") {
            XCTAssertEqual("\($0)", "nws: HTTP 404")
        }
        XCTAssertEqual(telemetry.requestsOnThePage("nws", code: "404"), 3, "a wrong url:'s 404s are failures")
        XCTAssertEqual(telemetry.requestsOnThePage("nws", code: "outside_area"), 2)
        // A 400 problem document (the reference: possible for a point outside the US) is no
        // coverage too, never retried; another server's 400 is a failure.
        problem(
            #"{"type":"https://api.weather.gov/problems/BadRequest","title":"Bad Request","status":400}"#,
            status: .badRequest)
        XCTAssertEqual(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), [])
        XCTAssertEqual(telemetry.requestsOnThePage("nws", code: "outside_area"), 3)
        reply.withLockedValue { $0 = (.badRequest, [("Content-Type", "text/html")], Array("<h1>Bad</h1>".utf8)) }
        XCTAssertThrowsError(try NWSWarnings(upstream).fetch([newYork], logger: log.logger)[0].get(), "another's 400")
    }

    func problem(_ document: String, status: HTTPResponseStatus = .notFound) {
        reply.withLockedValue { $0 = (status, [("Content-Type", "application/problem+json")], Array(document.utf8)) }
    }

    func testMETNorwayHonoursExpiresAndIfModifiedSince() throws {
        let modified = "Mon, 15 Jun 2026 11:55:00 GMT"
        let expires = HTTPDate.format(Date(timeIntervalSince1970: clock.now() + 600))
        try answer(
            .ok, fixture: "met-norway-metalerts.json", headers: [("Last-Modified", modified), ("Expires", expires)])
        let source = METNorwayWarnings(upstream, logger: log.logger)
        let first = try source.fetch([oslo], logger: log.logger)[0].get()
        XCTAssertEqual(first.map(\.severity), [.moderate, .severe])
        XCTAssertEqual(requests.map(\.uri), ["/weatherapi/metalerts/2.0/current.json?lat=59.9139&lon=10.7522&lang=en"])
        XCTAssertEqual(requests[0].headers.first(name: "User-Agent"), Self.agent)
        XCTAssertNil(requests[0].headers.first(name: "If-Modified-Since"))

        clock.advance(by: 599)
        XCTAssertEqual(try source.fetch([oslo], logger: log.logger)[0].get(), first)
        XCTAssertEqual(requests.count, 1, "no request before Expires")

        clock.advance(by: 1)
        try answer(.notModified, fixture: nil)
        XCTAssertEqual(try source.fetch([oslo], logger: log.logger)[0].get(), first, "a 304 keeps the list")
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(requests[1].headers.first(name: "If-Modified-Since"), modified)

        clock.advance(by: 600)
        try answer(.ok, fixture: "met-norway-metalerts-empty.json")
        XCTAssertEqual(try source.fetch([oslo], logger: log.logger)[0].get(), [], "the warnings were lifted")
    }

    func testMETNorwayRefusalsSayWhy() throws {
        try answer(.forbidden, fixture: nil)
        XCTAssertThrowsError(
            try METNorwayWarnings(upstream, logger: log.logger).fetch([oslo], logger: log.logger)[0].get()
        ) {
            XCTAssertEqual("\($0)", "met-norway: HTTP 403 (MET refuses this User-Agent or has blocked this client)")
        }
    }

    /// MET's 422 (an HTML page) for a point outside its areas is no warnings; a 422 in JSON is
    /// another server's (a FastAPI one's validation error behind a wrong `url:`), a failure.
    func testMETNorwayOutsideItsAreasIsNoWarningsButAnotherServers422IsAFailure() throws {
        reply.withLockedValue {
            $0 = (.unprocessableEntity, [("Content-Type", "text/html; charset=utf-8")], Array("<h1>422</h1>".utf8))
        }
        let source = METNorwayWarnings(upstream, logger: log.logger)
        XCTAssertEqual(try source.fetch([oslo], logger: log.logger)[0].get(), [])
        clock.advance(by: 600)
        reply.withLockedValue {
            $0 = (.unprocessableEntity, [("Content-Type", "application/json")], Array(#"{"detail":[]}"#.utf8))
        }
        XCTAssertThrowsError(try source.fetch([oslo], logger: log.logger)[0].get()) {
            XCTAssertEqual("\($0)", "met-norway: HTTP 422")
        }
        XCTAssertEqual(telemetry.upstreamCodes(provider: "met-norway-metalerts"), ["outside_area": 1, "422": 1])
    }

    /// MetAlerts' requests are counted apart from MET Norway's forecast, under a name of their
    /// own; its messages still name the source as the config does, answered or not.
    func testMETNorwayWarningsAreCountedApartAndNamedAsTheSource() throws {
        try answer(.serviceUnavailable, fixture: nil)
        let source = METNorwayWarnings(upstream, logger: log.logger)
        XCTAssertThrowsError(try source.fetch([oslo], logger: log.logger)[0].get()) {
            XCTAssertEqual("\($0)", "met-norway: HTTP 503")
        }
        let closed = try ClosedPort()
        let unreachable = Upstream(
            baseURL: "http://127.0.0.1:\(closed.port)", timeout: 5, client: CurlHTTPClient(userAgent: Self.agent),
            recorder: telemetry, clock: clock)
        XCTAssertThrowsError(
            try METNorwayWarnings(unreachable, logger: log.logger).fetch([oslo], logger: log.logger)[0].get()
        ) {
            XCTAssertTrue("\($0)".hasPrefix("met-norway: "), "\($0)")
        }
        XCTAssertEqual(telemetry.upstreamCodes(provider: "met-norway-metalerts"), ["503": 1, "connect": 1])
        XCTAssertEqual(telemetry.upstreamCodes(provider: "met-norway"), [:], "the forecast's name stays its own")
        XCTAssertEqual(source.providerLabel, "met-norway-metalerts", "its feed's log lines, as its requests")
    }

    func testDWDThroughBrightSkyAndItsNotCoveredAnswer() throws {
        try answer(.ok, fixture: "brightsky-alerts.json")
        XCTAssertEqual(
            try DWDWarnings(upstream).fetch([gottingen], logger: log.logger)[0].get().map(\.severity), [.minor])
        XCTAssertEqual(requests.map(\.uri), ["/alerts?lat=51.55&lon=9.9"])
        XCTAssertEqual(requests[0].headers.first(name: "User-Agent"), Self.agent)
        try answer(.notFound, fixture: "brightsky-alerts-outside-germany.json")
        XCTAssertEqual(try DWDWarnings(upstream).fetch([gottingen], logger: log.logger)[0].get(), [], "not covered")
        try answer(.notFound, fixture: nil)
        XCTAssertThrowsError(try DWDWarnings(upstream).fetch([gottingen], logger: log.logger)[0].get(), "another 404")
        XCTAssertEqual(telemetry.upstreamCodes(provider: "dwd"), ["200": 1, "outside_area": 1, "404": 1])
    }

    /// A list longer than a place shows is logged when it first is, not at every ask, and again
    /// once it was short in between.
    func testAListLongerThanAPlaceShowsIsLoggedOnce() throws {
        var document = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(TestPaths.fixtureBytes("nws-alerts-active.json"))) as? [String: Any]
        )
        let features = try XCTUnwrap(document["features"] as? [[String: Any]])
        func list(_ count: Int) throws {
            document["features"] = (0..<count).map { index -> [String: Any] in
                var feature = features[1]
                var properties = feature["properties"] as? [String: Any] ?? [:]
                properties["id"] = "urn:oid:\(index)"
                feature["properties"] = properties
                return feature
            }
            let body = try JSONSerialization.data(withJSONObject: document)
            reply.withLockedValue { $0 = (.ok, [("Content-Type", "application/geo+json")], Array(body)) }
        }
        let source = CoveredPlaces(
            source: NWSWarnings(upstream), settings: WarningSettings(sources: [WarningSourceSettings(name: .nws)]),
            cut: NIOLockedValueBox([]))
        let told = { self.log.entries(containing: "warning list longer than a place shows") }
        for (count, logged) in [(50, 0), (51, 1), (60, 1), (2, 1), (51, 2)] {
            try list(count)
            XCTAssertEqual(try source.fetch([newYork], logger: log.logger)[0].get().count, count)
            XCTAssertEqual(told().count, logged, "after a list of \(count)")
        }
        XCTAssertEqual(told().first?.metadata["listed"], "51")
        XCTAssertEqual(told().first?.metadata["location"], "New York")
    }

    /// One outcome per place in order; a place outside every area is never handed to a source.
    func testOutcomesInOrderAndNoRequestOutsideEveryArea() throws {
        try answer(.ok, fixture: "nws-alerts-empty.json")
        var config = Config(places: [newYork, Place(name: "Brussels", latitude: 50.85, longitude: 4.35), oslo])
        config.warnings = WarningSettings(sources: [WarningSourceSettings(name: .nws, url: server.baseURL)])
        XCTAssertEqual(config.warnings.schedule(.nws, places: config.places).places.map(\.name), ["New York"])
        XCTAssertEqual(config.warnings.schedule(.nws, places: config.places).interval, 300)
        XCTAssertEqual(config.warnings.schedule(.dwd, places: config.places).places.map(\.name), [])
        // A city: place not found yet waits for the feed's geocoder, unless it chose no source.
        var springfield = Place(name: "Springfield", city: CitySearch(query: "Springfield, Illinois"))
        XCTAssertEqual(config.warnings.schedule(.nws, places: [springfield]).places.map(\.name), ["Springfield"])
        XCTAssertEqual(config.warnings.schedule(.dwd, places: [springfield]).places.map(\.name), [], "not configured")
        springfield.warningSources = []
        XCTAssertEqual(config.warnings.schedule(.nws, places: [springfield]).places.map(\.name), [])
        let places = [newYork, Place(name: "Chicago", latitude: 41.88, longitude: -87.63)]
        let outcomes = NWSWarnings(upstream).fetch(places, logger: log.logger)
        XCTAssertEqual(outcomes.count, 2)
        XCTAssertEqual(
            Set(requests.map(\.uri)), ["/alerts/active?point=40.7143,-74.006", "/alerts/active?point=41.88,-87.63"])
    }
}
