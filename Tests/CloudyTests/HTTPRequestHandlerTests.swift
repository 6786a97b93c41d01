import NIOCore
import NIOHTTP1
import XCTest

@testable import Cloudy

/// How the server treats a request whatever its path, through the real pipeline on an
/// `EmbeddedChannel`: methods and HEAD, 404/405/413, keep-alive and `Connection: close`,
/// pipelining, and requests NIO's decoder refuses.
final class HTTPRequestHandlerTests: XCTestCase {
    let reload = ReloadRecorder()

    func connection() throws -> EmbeddedHTTPConnection {
        try EmbeddedHTTPConnection(.ready, reload: reload)
    }

    // MARK: methods

    func testHEADGivesTheHeadersOfGETWithoutABody() throws {
        let server = try connection()
        for path in ["/healthz", "/-/healthy", "/readyz", "/-/ready", "/"] {
            let get = try server.request("GET", path)
            let head = try server.request("HEAD", path)
            XCTAssertEqual(head.status, 200, path)
            XCTAssertEqual(head.headerLines, get.headerLines, path)
            XCTAssertEqual(server.unparsedBytes, 0, "no body after the head of \(path)")
        }
        // The live process_* part of /metrics may be read again between two scrapes, so only
        // its length can differ.
        for headers in [[], ["Accept-Encoding: gzip"], ["Accept: application/openmetrics-text"]] {
            let get = try server.request("GET", "/metrics", headers: headers)
            let head = try server.request("HEAD", "/metrics", headers: headers)
            XCTAssertEqual(head.status, 200)
            let withoutLength = { (lines: [String]) in lines.filter { !$0.hasPrefix("Content-Length:") } }
            XCTAssertEqual(withoutLength(head.headerLines), withoutLength(get.headerLines), "\(headers)")
            let length = try XCTUnwrap(Int(head.header("Content-Length") ?? ""), "HEAD tells the length")
            XCTAssertEqual(Double(length), Double(get.body.count), accuracy: 200, "\(headers)")
            XCTAssertEqual(server.unparsedBytes, 0, "no body after the head of /metrics \(headers)")
        }
        XCTAssertTrue(server.isOpen)
    }

    /// HEAD of the plain exposition tells the length GET sends, from the length recorded when the
    /// page was rendered and the live tail, without inflating the text from its gzip member.
    func testHEADOfThePlainExpositionTellsItsLengthWithoutInflatingIt() throws {
        var process = MetricFamilies()
        process.add(MetricDescriptor("process_open_fds", .gauge, "Open fds."), labels: [], value: 7)
        let fixedProcess = process
        let store = WeatherStore(
            config: Config(places: [Place(name: "Berlin", latitude: 52.52, longitude: 13.41)]),
            telemetry: ExporterTelemetry(startedAt: 0), telemetryPath: "/metrics", now: 60,
            processMetrics: { fixedProcess })
        let server = try EmbeddedHTTPConnection(
            routes: Routes(store: store, telemetryPath: "/metrics", reload: reload.reload))
        for headers in [[], ["Accept: application/openmetrics-text"]] {
            let kept = store.rendered.metrics.plainTextsKept
            let head = try server.request("HEAD", "/metrics", headers: headers)
            XCTAssertEqual(head.status, 200)
            XCTAssertLessThanOrEqual(store.rendered.metrics.plainTextsKept, kept, "HEAD inflates nothing \(headers)")
            let get = try server.request("GET", "/metrics", headers: headers)
            XCTAssertEqual(head.header("Content-Length"), String(get.body.count), "\(headers)")
            XCTAssertTrue(get.text.contains("process_open_fds 7\n"), "the live tail is counted")
        }
    }

    /// Response headers are not validated a second time by NIO (every one is a constant, a
    /// number or a web-config header the loader checked; WebConfigLoaderTests): the check cost
    /// ~4,900 instructions per gzip scrape.
    func testResponseHeadersAreNotValidatedAgainPerAnswer() throws {
        let server = try connection()
        XCTAssertThrowsError(
            try server.channel.pipeline.syncOperations.handler(type: NIOHTTPResponseHeadersValidator.self))
        XCTAssertEqual(try server.request("GET", "/metrics", headers: ["Accept-Encoding: gzip"]).status, 200)
    }

    func testAWrongMethodIs405WithAllow() throws {
        let server = try connection()
        for (method, path) in [
            ("POST", "/metrics"), ("PUT", "/healthz"), ("DELETE", "/-/healthy"), ("POST", "/readyz"),
            ("PATCH", "/-/ready"), ("POST", "/"),
        ] {
            let answer = try server.request(method, path)
            XCTAssertEqual(answer.status, 405, "\(method) \(path)")
            XCTAssertEqual(answer.header("Allow"), "GET, HEAD", "\(method) \(path)")
            XCTAssertEqual(answer.text, "405 method not allowed\n")
            XCTAssertEqual(answer.header("Connection"), "keep-alive", "a wrong method does not cost the connection")
        }
        for method in ["GET", "HEAD", "DELETE"] {
            let answer = try server.request(method, "/-/reload")
            XCTAssertEqual(answer.status, 405, method)
            XCTAssertEqual(answer.header("Allow"), "POST, PUT", method)
        }
        XCTAssertEqual(server.offloadedWorkCount, 0)
        XCTAssertEqual(reload.calls, 0, "a refused method never reloads")
    }

    /// A request target in absolute form names the same page as its path (RFC 9112 §3.2.2).
    func testATargetInAbsoluteFormNamesItsPath() {
        XCTAssertEqual(Routes.path(of: "/metrics?x=1"), "/metrics")
        XCTAssertEqual(Routes.path(of: "http://cloudy:10150/metrics"), "/metrics")
        XCTAssertEqual(Routes.path(of: "HTTPS://cloudy/places/Berlin?x"), "/places/Berlin")
        XCTAssertEqual(Routes.path(of: "http://cloudy"), "/")
        XCTAssertEqual(Routes.path(of: "*"), "*", "OPTIONS' asterisk form is no page")
        XCTAssertEqual(Routes.path(of: "http://cloudy?next=/metrics"), "/", "the query is not the path")
        XCTAssertEqual(Routes.path(of: "foo?u=http://x/healthz"), "foo", "no scheme: not absolute form")
    }

    /// `--web.telemetry-path` must be a path a scrape can ask for as written, and must not take
    /// another page's place (the stylesheet, a place's page) or stand where none can answer.
    func testTheTelemetryPathIsAPathOfItsOwn() {
        for path in ["/metrics", "/cloudy/metrics", "/-/metrics", "/probe;v=2", "/places"] {
            XCTAssertNil(Routes.telemetryPathProblem(path), path)
        }
        for path in ["metrics", "/metrics?x", "/met rics", "/m%65trics", "/metrics#top", "/métriques"] {
            XCTAssertEqual(
                Routes.telemetryPathProblem(path), "must be a path that starts with / and has no ?, #, % or space", path
            )
        }
        for path in [
            "/", "/healthz", "/readyz", "/-/ready", "/-/reload", "/cloudy.css", "/favicon.svg", "/places/Berlin",
        ] {
            XCTAssertNotNil(Routes.telemetryPathProblem(path), path)
            XCTAssertTrue(Routes.telemetryPathProblem(path)?.hasPrefix("must not be one of") == true, path)
        }
    }

    func testAnUnknownPathIs404WhateverTheMethod() throws {
        let server = try connection()
        for (method, path) in [
            ("GET", "/nope"), ("GET", "/metrics/"), ("GET", "/healthz/x"), ("POST", "/nope"),
            ("GET", "/-/reload/"), ("HEAD", "/favicon.ico"),
        ] {
            let answer = try server.request(method, path)
            XCTAssertEqual(answer.status, 404, "\(method) \(path)")
            XCTAssertEqual(answer.header("Content-Type"), "text/plain; charset=utf-8")
            XCTAssertNil(answer.header("Allow"))
            if method != "HEAD" { XCTAssertEqual(answer.text, "404 page not found\n") }
        }
        XCTAssertTrue(server.isOpen)
    }

    // MARK: request bodies

    func testABodyOverTheLimitIs413AndClosesTheConnection() throws {
        let server = try connection()
        let tooLarge = [UInt8](repeating: 0x61, count: HTTPRequestHandler.maxRequestBody + 1)
        let answer = try server.request("POST", "/-/reload", body: tooLarge)
        XCTAssertEqual(answer.status, 413)
        XCTAssertEqual(answer.text, "request body too large\n")
        XCTAssertEqual(answer.header("Connection"), "close")
        XCTAssertFalse(server.isOpen)
        XCTAssertEqual(server.offloadedWorkCount, 0)
        XCTAssertEqual(reload.calls, 0)
    }

    func testTheLimitCountsEveryChunkAndAppliesToEveryPath() throws {
        let server = try connection()
        try server.send("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = "8000\r\n" + String(repeating: "b", count: 0x8000) + "\r\n"
        try server.send(chunk + chunk + "1\r\nb\r\n0\r\n\r\n")
        let answer = try XCTUnwrap(try server.readResponse())
        XCTAssertEqual(answer.status, 413)
        XCTAssertFalse(server.isOpen)
    }

    func testABodyAtTheLimitIsRead() throws {
        let server = try connection()
        try server.send("POST", "/-/reload", body: Array(repeating: 0x61, count: HTTPRequestHandler.maxRequestBody))
        server.runOffloadedWork()
        XCTAssertEqual(try server.readResponse()?.status, 200)
        XCTAssertEqual(reload.calls, 1)
        XCTAssertEqual(try server.request("GET", "/healthz", body: Array("ignored".utf8)).text, "OK\n")
    }

    // MARK: connections

    func testHTTP11KeepsTheConnectionAliveAndAnswersEachRequest() throws {
        let server = try connection()
        for path in ["/healthz", "/metrics", "/nope", "/readyz"] {
            let answer = try server.request(path)
            XCTAssertEqual(answer.version, "HTTP/1.1")
            XCTAssertEqual(answer.header("Connection"), "keep-alive", path)
            XCTAssertTrue(server.isOpen, path)
        }
    }

    func testConnectionCloseIsAnsweredThenTheConnectionCloses() throws {
        let server = try connection()
        let answer = try server.request("/metrics", headers: ["Connection: close"])
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.header("Connection"), "close")
        XCTAssertEqual(answer.header("Content-Length"), String(answer.body.count), "the whole answer before the close")
        XCTAssertFalse(server.isOpen)
    }

    func testHTTP10ClosesUnlessTheClientAsksForKeepAlive() throws {
        let closing = try connection()
        let answer = try closing.request("/healthz", version: "HTTP/1.0")
        XCTAssertEqual(answer.version, "HTTP/1.0")
        XCTAssertEqual(answer.header("Connection"), "close")
        XCTAssertFalse(closing.isOpen)

        let keeping = try connection()
        let kept = try keeping.request("/healthz", headers: ["Connection: keep-alive"], version: "HTTP/1.0")
        XCTAssertEqual(kept.header("Connection"), "keep-alive")
        XCTAssertTrue(keeping.isOpen)
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let server = try connection()
        try server.sendPipelined([
            ("GET", "/healthz", []), ("GET", "/nope", []), ("HEAD", "/readyz", []),
            ("GET", "/readyz", ["Connection: close"]),
        ])
        let answers = try (0..<4).map { _ in try XCTUnwrap(try server.readResponse()) }
        XCTAssertEqual(answers.map(\.status), [200, 404, 200, 200])
        XCTAssertEqual(answers.map(\.version), Array(repeating: "HTTP/1.1", count: 4))
        XCTAssertEqual(answers[0].text, "OK\n")
        XCTAssertEqual(answers[2].body, [], "HEAD: no body, even between pipelined answers")
        XCTAssertEqual(answers[3].text, "ready\n")
        XCTAssertEqual(server.unparsedBytes, 0)
        XCTAssertEqual(answers[3].header("Connection"), "close")
        XCTAssertFalse(server.isOpen)
    }

    // MARK: what NIO's decoder refuses

    func testGarbageIs400AndClosesTheConnection() throws {
        let server = try connection()
        try server.send([0x00, 0x01, 0xFF, 0xFE] + Array("\r\n\r\nnot http at all\r\n\r\n".utf8))
        let answer = try XCTUnwrap(try server.readResponse())
        XCTAssertEqual(answer.status, 400)
        XCTAssertFalse(server.isOpen)
    }

    func testHugeHeadersOrAHugeRequestLineAre400AndCloseTheConnection() throws {
        let big = String(repeating: "a", count: 200_000)
        for request in [
            "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n",
            "GET /\(big) HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            let server = try connection()
            try server.send(request)
            let answer = try XCTUnwrap(try server.readResponse())
            XCTAssertEqual(answer.status, 400, "NIO's error handler answers every decoding error with 400")
            XCTAssertFalse(server.isOpen)
        }
    }
}
