import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// The real libcurl client against a real server on 127.0.0.1.
final class CurlHTTPClientTests: XCTestCase {
    var server: ScriptedHTTPServer!
    let client = CurlHTTPClient(userAgent: "cloudy-test/1.0", maxBodyBytes: 64 * 1024, maxRedirects: 3)
    /// Signalled when a request for /hang has reached the server.
    let hangArrived = DispatchSemaphore(value: 0)

    override func setUpWithError() throws {
        let hangArrived = self.hangArrived
        server = try ScriptedHTTPServer { head in
            let path = head.uri
            switch path {
            case "/echo":
                let seen =
                    "ua=\(head.headers.first(name: "user-agent") ?? "") accept=\(head.headers.first(name: "accept") ?? "")"
                return .respond(
                    status: .ok, headers: [("X-Answer", "yes"), ("Retry-After", "7")], body: Array(seen.utf8))
            case "/big":
                return .respond(status: .ok, headers: [], body: [UInt8](repeating: 0x20, count: 200 * 1024))
            case "/cut":
                return .cutShort(announced: 1000, sent: Array("{\"latitude\":".utf8))
            case "/hang":
                hangArrived.signal()
                return .hang
            case "/file":
                return .respond(status: .found, headers: [("Location", "file:///etc/passwd")], body: [])
            case "/gzip":
                let gzip = GzipBody(compressing: Array("compressed hello".utf8))
                return .respond(
                    status: .ok, headers: [("Content-Encoding", "gzip")],
                    body: Array(gzip.prefix.readableBytesView) + gzip.suffix(appending: []))
            case "/status":
                return .respond(status: .serviceUnavailable, headers: [], body: Array("<html>busy</html>".utf8))
            default:
                if path.hasPrefix("/redirect/"), let n = Int(path.dropFirst("/redirect/".count)) {
                    if n == 0 { return .respond(status: .ok, headers: [], body: Array("landed".utf8)) }
                    return .respond(status: .found, headers: [("Location", "/redirect/\(n - 1)")], body: [])
                }
                return .respond(status: .notFound, headers: [], body: [])
            }
        }
    }

    override func tearDown() {
        server.stop()
    }

    func fetch(_ path: String, timeout: Double = 5) -> Result<HTTPResponse, HTTPClientError> {
        client.fetch(
            HTTPRequest(url: server.baseURL + path, headers: [("Accept", "application/json")], timeout: timeout))
    }

    func testSendsUserAgentAndHeadersAndReadsTheAnswer() throws {
        let response = try fetch("/echo").get()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "ua=cloudy-test/1.0 accept=application/json")
        XCTAssertEqual(response.headers["x-answer"], "yes")
        XCTAssertEqual(response.headers["retry-after"], "7")
    }

    func testErrorStatusesAreResponsesNotFailures() throws {
        let response = try fetch("/status").get()
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "<html>busy</html>")
    }

    func testDecodesGzip() throws {
        XCTAssertEqual(String(decoding: try fetch("/gzip").get().body, as: UTF8.self), "compressed hello")
    }

    func testBodyOverTheCapIsAbandoned() {
        XCTAssertEqual(failureKind(fetch("/big")), .tooLarge)
    }

    func testBodyCutShortIsAnError() {
        XCTAssertEqual(failureKind(fetch("/cut")), .truncated)
    }

    func testHungServerTimesOut() {
        let started = Date()
        XCTAssertEqual(failureKind(fetch("/hang", timeout: 0.5)), .timeout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testFollowsAFewRedirectsButNotMany() throws {
        XCTAssertEqual(String(decoding: try fetch("/redirect/3").get().body, as: UTF8.self), "landed")
        XCTAssertEqual(failureKind(fetch("/redirect/4")), .redirect)
    }

    func testOnlyHTTPAndHTTPSEvenAfterARedirect() {
        XCTAssertEqual(failureKind(fetch("/file")), .invalidRequest, "libcurl refuses the file: redirect")
        XCTAssertEqual(failureKind(client.fetch(HTTPRequest(url: "file:///etc/passwd", timeout: 1))), .invalidRequest)
    }

    func testKeepsTheConnectionOpenForTheNextExchange() throws {
        for _ in 0..<3 { XCTAssertEqual(try fetch("/echo").get().status, 200) }
        XCTAssertEqual(server.connections, 1, "three exchanges in a row share one connection")
        XCTAssertEqual(failureKind(fetch("/cut")), .truncated)  // the server closes that one
        XCTAssertEqual(try fetch("/echo").get().status, 200, "a closed connection is replaced")
        XCTAssertEqual(server.connections, 2)
        XCTAssertEqual(failureKind(fetch("/hang", timeout: 0.3)), .timeout)
        XCTAssertEqual(
            String(decoding: try fetch("/echo").get().body, as: UTF8.self),
            "ua=cloudy-test/1.0 accept=application/json", "a reused handle starts from clean options")
    }

    func testConcurrentExchangesEachGetAHandle() {
        let results = NIOLockedValueBox<[Int]>([])
        let (client, url) = (client, server.baseURL + "/echo")
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let status = (try? client.fetch(HTTPRequest(url: url, timeout: 5)).get().status) ?? -1
            results.withLockedValue { $0.append(status) }
        }
        XCTAssertEqual(results.withLockedValue { $0 }, Array(repeating: 200, count: 8))
        XCTAssertLessThanOrEqual(server.connections, 8)
    }

    func testRefusedConnection() {
        let port = server.port
        server.stop()
        let result = client.fetch(HTTPRequest(url: "http://127.0.0.1:\(port)/echo", timeout: 2))
        XCTAssertEqual(failureKind(result), .connect)
    }

    func testCancelAllAbortsAHungExchangeQuickly() {
        let started = Date()
        let (client, arrived) = (self.client, hangArrived)
        // Once the exchange is under way (the server holds it), not after a guessed delay.
        DispatchQueue.global().async {
            _ = arrived.wait(timeout: .now() + 10)
            client.cancelAll()
        }
        XCTAssertEqual(failureKind(fetch("/hang", timeout: 30)), .cancelled)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "libcurl checks the flag at least once a second")
        XCTAssertEqual(failureKind(fetch("/echo")), .notSent, "refuses new exchanges until resumed")
        client.resume()
        XCTAssertNoThrow(try fetch("/echo").get())
    }

    func failureKind(_ result: Result<HTTPResponse, HTTPClientError>) -> HTTPClientError.Kind? {
        if case .failure(let error) = result { return error.kind }
        return nil
    }
}
