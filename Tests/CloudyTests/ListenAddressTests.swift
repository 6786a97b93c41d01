import Logging
import NIOCore
import NIOPosix
import XCTest

@testable import Cloudy

/// `--web.listen-address` as deployments give it: the default `:10150` is every interface, IPv6
/// and IPv4 alike (`::`, or `0.0.0.0` on a host without IPv6); an IPv6 host is in brackets.
final class ListenAddressTests: XCTestCase {
    func testHostAndPortAreRead() {
        XCTAssertEqual(ListenAddress(":10150"), ListenAddress(host: nil, port: 10150), "no host: every interface")
        XCTAssertEqual(ListenAddress("127.0.0.1:0"), ListenAddress(host: "127.0.0.1", port: 0))
        XCTAssertEqual(ListenAddress("[::1]:9100"), ListenAddress(host: "::1", port: 9100))
        XCTAssertEqual(ListenAddress("exporter.local:80"), ListenAddress(host: "exporter.local", port: 80))
        XCTAssertEqual(ListenAddress("[]:80"), ListenAddress(host: nil, port: 80))
        for refused in ["::1:80", "[::1:80", "127.0.0.1", "127.0.0.1:", ":65536", ":-1", ":http", ""] {
            XCTAssertNil(ListenAddress(refused), refused)
        }
        XCTAssertEqual(ListenAddress(host: "::1", port: 80).description, "[::1]:80")
        XCTAssertEqual(ListenAddress(host: nil, port: 10150).description, ":10150")
    }

    /// Bound without a host, the server answers on IPv4's loopback and, where the machine has
    /// one, IPv6's: Prometheus and the probes reach it whichever they use.
    func testNoHostAnswersOnEveryInterface() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") { nil }
        let quiet = Logger(label: "t") { _ in SwiftLogNoOpLogHandler() }
        let server = HTTPServer(group: group, routes: routes, logger: quiet)
        try await server.bind([ListenAddress(host: nil, port: 0)])
        let bound = try XCTUnwrap(server.boundAddresses.first)
        let port = try XCTUnwrap(bound.port)
        let client = CurlHTTPClient(userAgent: "cloudy-tests")
        var hosts = ["127.0.0.1"]
        if case .v6 = bound { hosts.append("[::1]") }
        for host in hosts {
            let health = client.fetch(HTTPRequest(url: "http://\(host):\(port)/healthz", timeout: 5))
            XCTAssertEqual(try health.get().status, 200, host)
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
