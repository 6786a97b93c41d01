import NIOCore
import XCTest

@testable import Cloudy

/// What each path answers, through the server's real pipeline on an `EmbeddedChannel`: health,
/// readiness, the status page, `/metrics` in both formats with and without gzip, and reload.
final class RoutesTests: XCTestCase {
    func connection(
        _ state: ServerTestStoreState = .ready, telemetryPath: String = "/metrics",
        reload: ReloadRecorder = ReloadRecorder()
    ) throws -> EmbeddedHTTPConnection {
        try EmbeddedHTTPConnection(state, telemetryPath: telemetryPath, reload: reload)
    }

    // MARK: health and readiness

    /// Asks each of `paths` (aliases of one endpoint) and checks the plain-text answer.
    func assertPlainText(
        _ server: EmbeddedHTTPConnection, _ paths: [String], status: Int, text: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        for path in paths {
            let answer = try server.request(path)
            XCTAssertEqual(answer.status, status, path, file: file, line: line)
            XCTAssertEqual(answer.text, text, path, file: file, line: line)
            XCTAssertEqual(answer.header("Content-Type"), "text/plain; charset=utf-8", path, file: file, line: line)
            XCTAssertEqual(answer.header("Content-Length"), String(text.utf8.count), path, file: file, line: line)
        }
    }

    func testHealthAnswersOKOnBothPathsEvenBeforeTheFirstRefresh() throws {
        try assertPlainText(connection(.waitingForFirstRefresh), ["/healthz", "/-/healthy"], status: 200, text: "OK\n")
    }

    func testNotReadyUntilEveryPlaceHadAFirstRefresh() throws {
        try assertPlainText(
            connection(.waitingForFirstRefresh), ["/readyz", "/-/ready"], status: 503,
            text: "not ready: waiting for the first refresh of 3 of 3 places\n")
    }

    func testReadyOnBothPathsOnceRefreshed() throws {
        try assertPlainText(connection(.ready), ["/readyz", "/-/ready"], status: 200, text: "ready\n")
    }

    func testReadyListsEachFailingPlaceBelowTheFirstLineOnOneLineEach() throws {
        let answer = try connection(.readyWithNewYorkFailing).request("/readyz")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.text, "ready\nfailing: New York: open-meteo: HTTP 503 upstream body\n")
    }

    func testNotReadyWhenNoPlaceWasEverRefreshedSaysWhyOnOneLine() throws {
        let answer = try connection(.everyRefreshFailed).request("/-/ready")
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(
            answer.text,
            "not ready: no place has been refreshed successfully yet: open-meteo: HTTP 503 upstream body\n")
    }

    // MARK: the status page

    func testLandingPageShowsEveryPlaceAndLinksTheTelemetryPath() throws {
        let answer = try connection(.ready).request("/")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(answer.header("Content-Length"), String(answer.body.count))
        XCTAssertEqual(answer.header("Content-Security-Policy"), Self.contentSecurityPolicy)
        let html = answer.text
        XCTAssertTrue(html.contains("<a href=\"/metrics\">"), html)
        XCTAssertTrue(html.contains("<a dir=\"auto\" href=\"/places/New%20York\">New York</a>"), html)
        XCTAssertTrue(html.contains("<span class=\"badge\">up</span>"), html)
        XCTAssertTrue(html.contains("2:15 PM"), "Berlin's 12:15Z observation in 12h notation, local time")

        let custom = try connection(.ready, telemetryPath: "/weather/metrics").request("/")
        XCTAssertTrue(custom.text.contains("<a href=\"/weather/metrics\">"), custom.text)
    }

    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'none'"

    func testEachPlaceHasAPageAtItsPercentEncodedName() throws {
        let server = try connection(.readyWithNewYorkFailing)
        let berlin = try server.request("/places/Berlin")
        XCTAssertEqual(berlin.status, 200)
        XCTAssertEqual(berlin.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(berlin.header("Content-Security-Policy"), Self.contentSecurityPolicy)
        XCTAssertTrue(berlin.text.contains("<h1 dir=\"auto\">Berlin</h1>"), berlin.text)
        XCTAssertTrue(berlin.text.contains("<th scope=\"row\">Today</th>"), berlin.text)
        let newYork = try server.request("/places/New%20York?from=landing")
        XCTAssertEqual(newYork.status, 200)
        XCTAssertTrue(
            newYork.text.contains("<span class=\"badge\">down</span> <span dir=\"auto\">open-meteo: HTTP 503"),
            newYork.text)

        let head = try server.request("HEAD", "/places/Berlin")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), String(berlin.body.count))
        XCTAssertTrue(head.body.isEmpty)
        XCTAssertEqual(try server.request("POST", "/places/Berlin").status, 405)
    }

    func testAnUnknownPlaceGetsTheNotFoundPage() throws {
        let server = try connection(.ready)
        for path in ["/places/Paris", "/places/", "/places/Berlin/week", "/places/%ZZ", "/places/New+York"] {
            let answer = try server.request(path)
            XCTAssertEqual(answer.status, 404, path)
            XCTAssertEqual(answer.header("Content-Type"), "text/html; charset=utf-8", path)
            XCTAssertTrue(answer.text.contains("<h1>No such place</h1>"), path)
        }
        XCTAssertEqual(try server.request("/places").text, "404 page not found\n", "not a place page")
    }

    func testTheStylesheetIsServedFromTheBinary() throws {
        let answer = try connection(.ready).request("/cloudy.css")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.header("Content-Type"), "text/css; charset=utf-8")
        XCTAssertTrue(answer.text.contains("prefers-color-scheme:dark"))
        let icon = try connection(.ready).request("/favicon.svg")
        XCTAssertEqual(icon.status, 200)
        XCTAssertEqual(icon.header("Content-Type"), "image/svg+xml")
        XCTAssertTrue(icon.text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    }

    // MARK: /metrics

    func testMetricsAreServedAtTheTelemetryPathOnly() throws {
        let server = try connection(.ready, telemetryPath: "/weather/metrics")
        let page = try server.request("/weather/metrics")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("\nweather_up{location=\"Berlin\"} 1\n"), page.text)
        XCTAssertEqual(try server.request("/metrics").status, 404)
    }

    func testMetricsArePrometheusTextByDefaultWithTheLiveProcessPart() throws {
        let server = try connection(.ready)
        let answer = try server.request("/metrics")
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertNil(answer.header("Content-Encoding"))
        XCTAssertEqual(answer.header("Vary"), "Accept-Encoding, Accept")
        XCTAssertEqual(answer.header("Content-Length"), String(answer.body.count))
        let samples = Exposition.parse(answer.text)
        for place in ["Berlin", "London", "New York"] {
            XCTAssertEqual(samples["weather_up{location=\"\(place)\"}"], 1, "the page of the last refresh: \(place)")
        }
        XCTAssertEqual(samples["weather_temperature_celsius{location=\"Berlin\"}"], 24.5)
        XCTAssertTrue(answer.text.contains("\nprocess_open_fds "), "and the live process_* part")
        XCTAssertFalse(answer.text.contains("# EOF"))
    }

    func testGzipWhenAskedCarriesTheSamePage() throws {
        let server = try connection(.ready)
        let plain = try server.request("/metrics")
        let zipped = try server.request("/metrics", headers: ["Accept-Encoding: gzip"])
        XCTAssertEqual(zipped.status, 200)
        XCTAssertEqual(zipped.header("Content-Encoding"), "gzip")
        XCTAssertEqual(zipped.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertEqual(zipped.header("Vary"), "Accept-Encoding, Accept")
        XCTAssertEqual(zipped.header("Content-Length"), String(zipped.body.count), "the compressed length")
        let unzipped = try XCTUnwrap(Gunzip.decompress(zipped.body), "one valid gzip member")
        XCTAssertEqual(withoutProcess(unzipped), withoutProcess(plain.body), "gzip carries the same page")
        let unzippedText = String(decoding: unzipped, as: UTF8.self)
        XCTAssertTrue(unzippedText.contains("\nprocess_open_fds "), "with its live process_* part")
    }

    func testAcceptEncodingNegotiation() throws {
        let server = try connection(.ready)
        let cases: [(header: String, gzip: Bool)] = [
            ("gzip", true), ("GZip", true), ("deflate, gzip;q=0.8", true), ("*", true), ("br, gzip ;\tq=0.5", true),
            ("gzip;q=0", false), ("gzip; q=0.000", false), ("identity", false), ("x-gzip, gzipper", false),
            ("*;q=0", false), ("gzip;q=abc", false),
        ]
        for (header, gzip) in cases {
            let answer = try server.request("/metrics", headers: ["Accept-Encoding: \(header)"])
            XCTAssertEqual(answer.header("Content-Encoding"), gzip ? "gzip" : nil, header)
            XCTAssertEqual(Gunzip.decompress(answer.body) != nil, gzip, header)
        }
        XCTAssertNil(try server.request("/metrics").header("Content-Encoding"), "no header, no gzip")
        // A header written on two lines is one list (RFC 9110 §5.3), for both negotiations.
        let twoLines = try server.request(
            "/metrics",
            headers: [
                "Accept-Encoding: identity", "accept-encoding: gzip", "Accept: text/plain;q=0.5",
                "Accept: application/openmetrics-text",
            ])
        XCTAssertEqual(twoLines.header("Content-Encoding"), "gzip")
        XCTAssertEqual(twoLines.header("Content-Type"), "application/openmetrics-text; version=1.0.0; charset=utf-8")
    }

    func testOpenMetricsWhenTheClientPrefersIt() throws {
        let server = try connection(.ready)
        let accept = "Accept: application/openmetrics-text; version=1.0.0, text/plain;q=0.5"
        let open = try server.request("/metrics", headers: [accept])
        XCTAssertEqual(open.header("Content-Type"), "application/openmetrics-text; version=1.0.0; charset=utf-8")
        XCTAssertEqual(open.header("Vary"), "Accept-Encoding, Accept")
        XCTAssertTrue(open.text.hasSuffix("# EOF\n"))
        XCTAssertTrue(open.text.contains("# TYPE cloudy_exporter_upstream_requests counter\n"), open.text)
        XCTAssertTrue(open.text.contains("\nprocess_open_fds "))
        XCTAssertEqual(open.header("Content-Length"), String(open.body.count))

        let zipped = try server.request("/metrics", headers: [accept, "Accept-Encoding: gzip"])
        XCTAssertEqual(zipped.header("Content-Type"), "application/openmetrics-text; version=1.0.0; charset=utf-8")
        XCTAssertEqual(zipped.header("Content-Encoding"), "gzip")
        let unzipped = String(decoding: try XCTUnwrap(Gunzip.decompress(zipped.body)), as: UTF8.self)
        XCTAssertTrue(unzipped.hasSuffix("# EOF\n"))
        XCTAssertEqual(withoutProcess(Array(unzipped.utf8)), withoutProcess(open.body))
    }

    func testPrometheusTextUnlessOpenMetricsIsPreferred() throws {
        let server = try connection(.ready)
        let prometheus = "text/plain; version=0.0.4; charset=utf-8"
        let openMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
        let cases: [(accept: String, contentType: String)] = [
            ("application/openmetrics-text", openMetrics),
            ("application/openmetrics-text;q=0.3, text/plain;q=0.9", prometheus),
            ("text/plain, application/openmetrics-text", prometheus),
            ("application/openmetrics-text, text/plain", openMetrics),
            ("application/openmetrics-text;q=0, text/plain", prometheus),
            ("text/html", prometheus),
            ("*/*", prometheus),
        ]
        for (accept, contentType) in cases {
            let answer = try server.request("/metrics", headers: ["Accept: \(accept)"])
            XCTAssertEqual(answer.header("Content-Type"), contentType, accept)
            XCTAssertEqual(answer.text.hasSuffix("# EOF\n"), contentType == openMetrics, accept)
        }
    }

    func testAQueryStringDoesNotChangeTheRoute() throws {
        let server = try connection(.ready)
        XCTAssertEqual(try server.request("/metrics?collect[]=weather").status, 200)
        XCTAssertEqual(try server.request("/healthz?probe=1").text, "OK\n")
        XCTAssertEqual(try server.request("/nope?x").status, 404)
    }

    // MARK: reload

    func testReloadAnswersOnceTheReloadRanOffTheEventLoop() throws {
        for method in ["POST", "PUT"] {
            let reload = ReloadRecorder()
            let server = try connection(.ready, reload: reload)
            try server.send(method, "/-/reload")
            XCTAssertNil(try server.readResponse(), "no answer while the config is being read")
            XCTAssertEqual(reload.calls, 0, "the reload does not run on the event loop")
            XCTAssertEqual(server.offloadedWorkCount, 1)
            server.runOffloadedWork()
            XCTAssertEqual(reload.calls, 1)
            let answer = try XCTUnwrap(try server.readResponse())
            XCTAssertEqual(answer.status, 200, method)
            XCTAssertEqual(answer.text, "config reloaded\n", method)
            XCTAssertEqual(answer.header("Content-Type"), "text/plain; charset=utf-8")
            XCTAssertEqual(answer.header("Connection"), "keep-alive")
            XCTAssertEqual(try server.request("/healthz").status, 200, "the connection serves on")
        }
    }

    func testARefusedReloadIs500WithTheReasonOnOneLine() throws {
        let reload = ReloadRecorder(refusal: "cloudy.yml:3: locations: is empty\n(at least one place)")
        let server = try connection(.ready, reload: reload)
        try server.send("POST", "/-/reload")
        server.runOffloadedWork()
        let answer = try XCTUnwrap(try server.readResponse())
        XCTAssertEqual(answer.status, 500)
        XCTAssertEqual(answer.text, "reload refused: cloudy.yml:3: locations: is empty (at least one place)\n")
        XCTAssertEqual(reload.calls, 1)
    }

    func testRequestsPipelinedBehindAReloadWaitForItsAnswer() throws {
        let server = try connection(.ready)
        try server.send("POST", "/-/reload")
        try server.send("GET", "/healthz")
        XCTAssertNil(try server.readResponse(), "answers keep the order of requests")
        server.runOffloadedWork()
        XCTAssertEqual(try server.readResponse()?.text, "config reloaded\n")
        XCTAssertEqual(try server.readResponse()?.text, "OK\n")
    }

    /// Bytes of a page, without the `process_*` lines that are read live at each scrape.
    func withoutProcess(_ bytes: [UInt8]) -> [Substring] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { !$0.contains("process_") }
    }
}
