import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import XCTest

@testable import Cloudy

/// `--web.max-connections`: the listening socket's handler on an `EmbeddedChannel` (accepted
/// connections are what a server channel reads), then the real bootstrap on 127.0.0.1.
final class ConnectionLimitTests: XCTestCase {
    func testAConnectionOverTheLimitIsClosedAtOnceAndCounted() throws {
        let limit = ConnectionLimit(maximum: 2)
        let listener = EmbeddedChannel(handler: limit.makeServerChannelHandler())
        let accepted = try (0..<3).map { _ in try Self.acceptedConnection() }
        for connection in accepted { try listener.writeInbound(connection as Channel) }

        XCTAssertTrue(accepted[0].isActive)
        XCTAssertTrue(accepted[1].isActive)
        XCTAssertFalse(accepted[2].isActive, "the third is closed at once")
        XCTAssertTrue(try listener.readInbound(as: Channel.self) === accepted[0])
        XCTAssertTrue(try listener.readInbound(as: Channel.self) === accepted[1])
        XCTAssertNil(try listener.readInbound(as: Channel.self), "the one over the limit goes no further")
        XCTAssertEqual(limit.open, 2)
        XCTAssertEqual(limit.rejected, 1)

        // A place frees when a connection closes; the next one is admitted.
        try accepted[0].close().wait()
        accepted[0].embeddedEventLoop.run()  // the close future's callbacks
        XCTAssertEqual(limit.open, 1)
        let next = try Self.acceptedConnection()
        try listener.writeInbound(next as Channel)
        XCTAssertTrue(next.isActive)
        XCTAssertEqual(limit.open, 2)
        XCTAssertEqual(limit.rejected, 1)

        var page = MetricFamilies()
        limit.addSamples(to: &page)
        var writer = ExpositionWriter(capacity: 512)
        for family in page.sorted() { writer.write(family, format: .prometheus) }
        let text = String(decoding: writer.bytes, as: UTF8.self)
        XCTAssertTrue(text.contains("\ncloudy_exporter_http_open_connections 2\n"), text)
        XCTAssertTrue(text.contains("\ncloudy_exporter_http_max_connections 2\n"), text)
        XCTAssertTrue(text.contains("\ncloudy_exporter_http_connections_rejected_total 1\n"), text)
        _ = try listener.finish(acceptAlreadyClosed: true)
    }

    func testTheLimitNeverExceedsWhatTheOpenFileLimitLeaves() {
        XCTAssertEqual(ConnectionLimit.effectiveMaximum(requested: 8192, descriptorLimit: 1_048_576), 8192)
        XCTAssertEqual(ConnectionLimit.effectiveMaximum(requested: 8192, descriptorLimit: 1024), 1024 - 128)
        XCTAssertEqual(ConnectionLimit.effectiveMaximum(requested: 100, descriptorLimit: 1024), 100)
        XCTAssertEqual(ConnectionLimit.effectiveMaximum(requested: 100, descriptorLimit: 20), 1)
        XCTAssertEqual(ConnectionLimit.effectiveMaximum(requested: 100, descriptorLimit: nil), 100)
    }

    func testTheServerClosesConnectionsOverItsLimitAndStillServesTheOthers() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let routes = Routes(store: try makeServerTestStore(.ready), telemetryPath: "/metrics") { nil }
        let limit = ConnectionLimit(maximum: 2)
        let server = HTTPServer(
            group: group, routes: routes, logger: Logger(label: "cloudy-tests") { _ in SwiftLogNoOpLogHandler() },
            connections: limit)
        try await server.bind([ListenAddress(host: "127.0.0.1", port: 0)])
        let port = try XCTUnwrap(server.boundAddresses.first?.port)

        let first = try RawConnection(port: port)
        let second = try RawConnection(port: port)
        try waitUntil("two connections open", timeout: 5) { limit.open == 2 }
        let third = try RawConnection(port: port)
        let refused = third.readUntilClosed()
        XCTAssertTrue(refused.closed, "the third connection is closed")
        XCTAssertEqual(refused.text, "", "closed without an answer")
        XCTAssertEqual(limit.rejected, 1)

        first.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(first.readUntilClosed().text.hasPrefix("HTTP/1.1 200 OK"))
        try waitUntil("the first connection's place is free", timeout: 5) { limit.open == 1 }
        let fourth = try RawConnection(port: port)
        fourth.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(fourth.readUntilClosed().text.hasPrefix("HTTP/1.1 200 OK"), "admitted once a place is free")
        _ = second
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// An accepted connection as a listening socket hands it on: an active channel.
    static func acceptedConnection() throws -> EmbeddedChannel {
        let connection = EmbeddedChannel()
        try connection.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 10150)).wait()
        return connection
    }
}
