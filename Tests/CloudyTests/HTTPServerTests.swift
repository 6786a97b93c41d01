import Dispatch
import Logging
import NIOCore
import NIOPosix
import XCTest

@testable import Cloudy

/// The server's bootstrap in-process, on a real socket on 127.0.0.1 through the real libcurl
/// client: binding (port 0, a taken port), serving with reloads on Dispatch, and stopping.
final class HTTPServerTests: XCTestCase {
    let logger = Logger(label: "cloudy-tests") { _ in SwiftLogNoOpLogHandler() }
    let client = CurlHTTPClient(userAgent: "cloudy-tests")

    func testServesOnTheBoundPortReloadsOffTheLoopAndStops() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let reload = ReloadRecorder(refusal: "cloudy.yml:1: refused")
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics", reload: reload.reload)
        let server = HTTPServer(group: group, routes: routes, logger: logger)
        try await server.bind([ListenAddress(host: "127.0.0.1", port: 0)])
        let port = try XCTUnwrap(server.boundAddresses.first?.port, "port 0 becomes the port the kernel chose")
        XCTAssertNotEqual(port, 0)
        let base = "http://127.0.0.1:\(port)"

        let metrics = try client.fetch(HTTPRequest(url: base + "/metrics", timeout: 5)).get()
        XCTAssertEqual(metrics.status, 200)
        XCTAssertEqual(metrics.headers["content-encoding"], "gzip", "libcurl asks for gzip")
        XCTAssertTrue(String(decoding: metrics.body, as: UTF8.self).contains("weather_up{location=\"Berlin\"} 1"))
        let refused = try client.fetch(HTTPRequest(url: base + "/-/reload", timeout: 5, body: [])).get()
        XCTAssertEqual(refused.status, 500)
        XCTAssertEqual(String(decoding: refused.body, as: UTF8.self), "reload refused: cloudy.yml:1: refused\n")
        XCTAssertEqual(reload.calls, 1)

        await server.shutdown()
        if case .success = client.fetch(HTTPRequest(url: base + "/healthz", timeout: 2)) {
            XCTFail("still answering after shutdown")
        }
        try await group.shutdownGracefully()
    }

    /// A reload still running when the server has stopped and its event loops have shut down
    /// drops its answer: handed to a loop that no longer runs, it was NIO's "Cannot schedule
    /// tasks", which crashes the suite under its `SWIFTNIO_STRICT`. Login checks come back the
    /// same way.
    func testAReloadThatOutlastsTheStopDropsItsAnswer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") {
            started.signal()
            release.wait()
            return nil
        }
        let reloads = DispatchQueue(label: "cloudy-tests.reloads")
        let server = HTTPServer(
            group: group, routes: routes, logger: logger, connections: ConnectionLimit(maximum: 10),
            offload: { reloads.async(execute: $0) })
        try await server.bind([ListenAddress(host: "127.0.0.1", port: 0)])
        let connection = try RawConnection(port: try XCTUnwrap(server.boundAddresses.first?.port))
        XCTAssertTrue(connection.send("POST /-/reload HTTP/1.1\r\nHost: cloudy\r\nContent-Length: 0\r\n\r\n"))
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success, "the reload never started")

        await server.shutdown(grace: .zero)
        try await group.shutdownGracefully()
        release.signal()
        reloads.sync {}  // the reload has returned and its answer has gone to the gate
        XCTAssertEqual(server.gate.dropped, 1)
        let (text, closed) = connection.readUntilClosed()
        XCTAssertEqual(text, "", "answered after the loops shut down")
        XCTAssertTrue(closed, "the connection closes with the loops")
    }

    func testATakenPortFailsBindingAndNamesTheAddress() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") { nil }
        let first = HTTPServer(group: group, routes: routes, logger: logger)
        try await first.bind([ListenAddress(host: "127.0.0.1", port: 0)])
        let port = try XCTUnwrap(first.boundAddresses.first?.port)

        let second = HTTPServer(group: group, routes: routes, logger: logger)
        do {
            try await second.bind([ListenAddress(host: "127.0.0.1", port: port)])
            XCTFail("bound a port that is taken")
        } catch let error as HTTPServerError {
            XCTAssertEqual(error.address, ListenAddress(host: "127.0.0.1", port: port))
            XCTAssertEqual(error.description, "cannot listen on 127.0.0.1:\(port): Address already in use")
        }
        await second.shutdown()
        await first.shutdown()
        try await group.shutdownGracefully()
    }

    /// A host that does not resolve is named as such, in the resolver's words, not NIO's.
    func testAnUnknownHostIsNamed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") { nil }
        let server = HTTPServer(group: group, routes: routes, logger: logger)
        do {
            try await server.bind([ListenAddress(host: "nosuchhost.invalid", port: 10150)])
            XCTFail("bound an unknown host")
        } catch let error as HTTPServerError {
            let named = "cannot listen on nosuchhost.invalid:10150: unknown host nosuchhost.invalid ("
            XCTAssertTrue(error.description.hasPrefix(named), error.description)
            XCTAssertFalse(error.description.contains("SocketAddressError"), error.description)
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// The real binary, told to listen on a free port and then on a taken one: it closes the
    /// first before its event loops stop (nothing half-started, no SwiftNIO complaint) and exits 1.
    func testATakenSecondAddressClosesTheFirstAndExitsOne() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") { nil }
        let taken = HTTPServer(group: group, routes: routes, logger: logger)
        try await taken.bind([ListenAddress(host: "127.0.0.1", port: 0)])
        let port = try XCTUnwrap(taken.boundAddresses.first?.port)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-bind-\(UUID())")
        defer { try? FileManager.default.removeItem(at: storage) }
        let run = try runProgram(
            TestPaths.exporterBinary.path,
            [
                "--web.listen-address=127.0.0.1:0", "--web.listen-address=127.0.0.1:\(port)",
                "--storage.path=\(storage.path)",
            ])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("cannot listen on 127.0.0.1:\(port)"), run.stderr)
        XCTAssertFalse(run.stderr.contains("Cannot schedule tasks"), run.stderr)
        await taken.shutdown()
        try await group.shutdownGracefully()
    }
}
