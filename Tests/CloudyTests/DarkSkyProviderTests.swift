import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The Dark Sky provider against a scripted server on 127.0.0.1 through the libcurl client: the
/// key travels in the path and nowhere else, and every error and log line shows that path with
/// the key as `<redacted>`; refusals are read as the other providers' are.
final class DarkSkyProviderTests: XCTestCase {
    /// A key that could not hide in any text.
    let key = "KEY-SPOT-ME-8d1f2e"
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006)
    var server: ScriptedHTTPServer?

    override func tearDown() {
        server?.stop()
    }

    func provider(
        _ baseURL: String, clock: ManualClock = ManualClock(), forecast: ForecastSettings = ForecastSettings()
    ) -> DarkSkyProvider {
        DarkSkyProvider(
            Upstream(
                baseURL: baseURL, timeout: 2, client: CurlHTTPClient(userAgent: "test"),
                recorder: ExporterTelemetry(startedAt: 0), clock: clock),
            apiKey: Secret(key), forecast: forecast)
    }

    /// A server that answers every request with `status`, `headers` and `body`, and keeps the URIs.
    func serve(
        _ status: HTTPResponseStatus, headers: [(String, String)] = [], body: [UInt8]
    ) throws -> (DarkSkyProvider, NIOLockedValueBox<[String]>) {
        let asked = NIOLockedValueBox([String]())
        let server = try ScriptedHTTPServer { head in
            asked.withLockedValue { $0.append(head.uri) }
            return .respond(status: status, headers: headers, body: body)
        }
        self.server = server
        return (provider(server.baseURL), asked)
    }

    func testTheKeyTravelsInThePathAndIsShownRedacted() throws {
        let (provider, asked) = try serve(.ok, body: try TestPaths.fixtureBytes("pirateweather-forecast.json"))
        let log = RecordedLog()
        let outcome = provider.fetch([newYork], logger: log.logger)
        XCTAssertEqual(try outcome[0].get().current.temperatureCelsius, 23.4)
        XCTAssertEqual(
            asked.withLockedValue { $0 }, ["/forecast/\(key)/40.7143,-74.006?units=si&exclude=minutely&version=2"])
        let requested = log.entries(containing: "dark-sky request")
        XCTAssertEqual(requested.count, 1)
        XCTAssertEqual(requested.first?.level, .debug)
        XCTAssertEqual(requested.first?.metadata["path"], "/forecast/<redacted>/40.7143,-74.006")
        XCTAssertFalse(log.all.contains { "\($0.message) \($0.metadata)".contains(key) })
        // 72 hours ahead: past the answer's 48 hourly steps, so the request extends them.
        _ = self.provider(server!.baseURL, forecast: ForecastSettings(days: 7, hours: 72)).fetch(
            [newYork], logger: log.logger)
        XCTAssertEqual(asked.withLockedValue { $0.last }?.hasSuffix("&version=2&extend=hourly"), true)
    }

    func testABadKeyIsReportedWithThePathRedacted() throws {
        let (provider, _) = try serve(
            .unauthorized, body: try TestPaths.fixtureBytes("pirateweather-error-401.json"))
        let error = try XCTUnwrap(provider.fetch([newYork], logger: Logger(label: "t")).first?.failure)
        XCTAssertEqual(
            error.message,
            "dark-sky: HTTP 401: Invalid authentication credentials (invalid API key) "
                + "(GET /forecast/<redacted>/40.7143,-74.006)")
        XCTAssertFalse(error.isRateLimit)
    }

    func testErrorsThatEchoTheKeyAreScrubbed() throws {
        let echo = Array("{\"message\":\"no route for /forecast/\(key)/x\"}".utf8)
        let (provider, _) = try serve(.notFound, body: echo)
        let error = try XCTUnwrap(provider.fetch([newYork], logger: Logger(label: "t")).first?.failure)
        XCTAssertEqual(
            error.message,
            "dark-sky: HTTP 404: no route for /forecast/<redacted>/x (GET /forecast/<redacted>/40.7143,-74.006)")
        let unreachable = self.provider("http://127.0.0.1:1").fetch([newYork], logger: Logger(label: "t"))
        let network = try XCTUnwrap(unreachable.first?.failure)
        XCTAssertEqual(network.cause, .network)
        XCTAssertTrue(network.message.hasSuffix("(GET /forecast/<redacted>/40.7143,-74.006)"), network.message)
        XCTAssertFalse(network.message.contains(key))
    }

    /// A short key (`k`) is scrubbed where it stands alone, as in a path or after `appid=`, not
    /// inside words, so the message stays readable; a key of a real length goes wherever it is.
    func testAShortKeyIsScrubbedOnlyWhereItStandsAlone() {
        XCTAssertEqual(
            Secret("k").scrub("dark-sky: HTTP 404: no route for /forecast/k/x?appid=k&key=k (k)"),
            "dark-sky: HTTP 404: no route for /forecast/<redacted>/x?appid=<redacted>&key=<redacted> (<redacted>)")
        XCTAssertEqual(Secret("k1").scrub("k1k1 k1"), "k1k1 <redacted>")
        XCTAssertEqual(Secret("k-k").scrub("kk-k-k"), "kk-<redacted>", "a glued copy overlapping one alone")
        XCTAssertEqual(Secret("0123abcd").scrub("key 0123abcd in x0123abcdy"), "key <redacted> in x<redacted>y")
    }

    /// The explanation is cut at 200 characters after the key is blanked out, so a cut that would
    /// fall inside an echoed key leaves no part of it.
    func testAKeyEchoedWhereTheExplanationIsCutLeavesNoPartOfIt() throws {
        let padding = String(repeating: "x", count: 185)
        let echo = Array("{\"detail\":\"\(padding)/forecast/\(key)/x\"}".utf8)
        let (provider, _) = try serve(.badRequest, body: echo)
        let error = try XCTUnwrap(provider.fetch([newYork], logger: Logger(label: "t")).first?.failure)
        XCTAssertFalse(error.message.contains(String(key.prefix(4))), error.message)
        XCTAssertTrue(error.message.contains(padding + "/forecast/<red"), error.message)
    }

    func testASpentMonthIsAQuotaRefusalAndAPerSecondLimitBacksOff() throws {
        let limited = Array("{\"message\":\"API rate limit exceeded\"}".utf8)
        let (monthly, _) = try serve(
            .tooManyRequests, headers: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "86400")], body: limited)
        let places = [newYork, Place(name: "Boston", latitude: 42.36, longitude: -71.06)]
        let outcomes = monthly.fetch(places, logger: Logger(label: "t"))
        let spent = try XCTUnwrap(outcomes[0].failure)
        XCTAssertEqual(spent.cause, .quota(.month))
        XCTAssertNil(spent.retryAfter, "none was sent")
        XCTAssertEqual(
            spent.windowResetsAt, ManualClock().now() + 86_400, "the key's month starts afresh: RateLimit-Reset")
        XCTAssertTrue(spent.isRateLimit)
        XCTAssertTrue(spent.message.hasPrefix("dark-sky: HTTP 429: API rate limit exceeded"), spent.message)
        XCTAssertFalse(spent.message.contains("(GET "), "every place shows it: no one place's path")
        XCTAssertEqual(outcomes[1].failure?.cause, .quota(.month), "asked at once, or not asked after the refusal")
        server?.stop()

        let (perSecond, _) = try serve(
            .tooManyRequests, headers: [("RateLimit-Remaining", "512"), ("Retry-After", "3")], body: limited)
        let throttled = try XCTUnwrap(perSecond.fetch([newYork], logger: Logger(label: "t")).first?.failure)
        XCTAssertEqual(throttled.cause, .other)
        XCTAssertEqual(throttled.retryAfter, 3)
        XCTAssertTrue(throttled.isRateLimit)
        server?.stop()

        let (badRequest, _) = try serve(.badRequest, body: Array("{\"detail\":\"Invalid Latitude\"}".utf8))
        let refused = try XCTUnwrap(badRequest.fetch([newYork], logger: Logger(label: "t")).first?.failure)
        XCTAssertEqual(refused.cause, .badRequest)
        XCTAssertTrue(refused.message.hasPrefix("dark-sky: HTTP 400: Invalid Latitude"), refused.message)
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
