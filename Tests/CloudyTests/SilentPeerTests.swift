import Foundation
import XCTest

@testable import Cloudy

#if canImport(Glibc)
    import Glibc
#endif

/// A request that runs out of time is told apart by how far it got, through the real libcurl
/// client against a listening socket on 127.0.0.1 that never accepts: with its queue full, the
/// connect's packets are dropped (a firewall, an egress not up yet); with room, the kernel
/// connects but nobody speaks (a TLS handshake, or an HTTP request, never answered).
final class SilentPeerTests: XCTestCase {
    let client = CurlHTTPClient(userAgent: "cloudy-tests")
    var listener: Int32 = -1
    var fillers: [Int32] = []
    var port = 0

    /// Listens on a free port with room for `backlog` connections, never accepting one.
    func listen(backlog: Int32) throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(listener, pointer, size) == 0 && Glibc.listen(listener, backlog) == 0
                    && getsockname(listener, pointer, &size) == 0
            }
        }
        XCTAssertTrue(bound, "listening on 127.0.0.1")
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Fills the listener's queue with connections nobody accepts, so the next connect's
    /// packets go unanswered.
    func fillQueue() {
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
    }

    override func tearDown() {
        for socket in fillers + [listener] where socket >= 0 { close(socket) }
    }

    func failure(_ scheme: String) -> HTTPClientError? {
        let result = client.fetch(HTTPRequest(url: "\(scheme)://127.0.0.1:\(port)/v1/forecast", timeout: 0.3))
        if case .failure(let error) = result { return error }
        return nil
    }

    func testAConnectWhosePacketsAreDroppedIsAConnectFailureNotATimeout() throws {
        try listen(backlog: 0)
        fillQueue()
        let error = try XCTUnwrap(failure("http"))
        XCTAssertEqual(error.kind, .connect, error.message)
        XCTAssertFalse(error.kind.mayHaveReachedProvider)
        XCTAssertEqual(WeatherFetchError.unanswered("open-meteo", error).cause, .network, "retried soon, no call")
    }

    func testATLSHandshakeNeverAnsweredIsATLSFailure() throws {
        try listen(backlog: 16)
        let error = try XCTUnwrap(failure("https"))
        XCTAssertEqual(error.kind, .tls, error.message)
        XCTAssertFalse(error.kind.mayHaveReachedProvider)
    }

    /// Once the request went, the provider may have done the work: a timeout, counted in full.
    func testARequestSentButNeverAnsweredIsATimeout() throws {
        try listen(backlog: 16)
        let error = try XCTUnwrap(failure("http"))
        XCTAssertEqual(error.kind, .timeout, error.message)
        XCTAssertTrue(error.kind.mayHaveReachedProvider)
    }
}
