import NIOCore
import NIOEmbedded
import XCTest

@testable import Cloudy

/// A client that pipelines requests and never reads the answers, on the real pipeline
/// (`HTTPServer.configureConnection`) over an `EmbeddedChannel` whose socket end is an
/// `UnreadSocket`: writes stay pending there until the test lets the client read them, and the
/// channel's read requests are counted where the socket would see them.
final class ResponseBacklogTests: XCTestCase {
    /// Ten pipelined requests in one segment: ~420 bytes, what one small read of a socket holds.
    static let tenRequests = Array(String(repeating: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", count: 10).utf8)

    func testAClientThatNeverReadsIsNoLongerReadFrom() throws {
        let connection = try StalledConnection()
        // As NIO's socket channel with autoRead: a read request, bytes, a read request, …
        var delivered = 0
        for _ in 0..<20 where connection.socket.readRequested {
            try connection.deliver(Self.tenRequests)
            delivered += 1
        }
        let backlog = try connection.backlog()
        XCTAssertEqual(delivered, 2, "reading stops once 16 answers are unwritten: after the second read of ten")
        XCTAssertEqual(backlog.unwritten, 20, "every request read is answered, none written")
        XCTAssertTrue(backlog.isPaused)
        XCTAssertFalse(connection.socket.readRequested, "the channel's read request is held, not passed to the socket")
        XCTAssertEqual(connection.socket.pendingResponses, 20)

        // The client reads: the writes complete, and reading resumes with the held read.
        connection.socket.clientReadsEverything()
        XCTAssertEqual(backlog.unwritten, 0)
        XCTAssertTrue(connection.socket.readRequested, "the held read reaches the socket once answers are written")
        XCTAssertEqual(connection.socket.statusLines.count, 20)
        XCTAssertTrue(
            connection.socket.statusLines.allSatisfy { $0 == "HTTP/1.1 200 OK" }, "\(connection.socket.statusLines)")
        try connection.deliver(Self.tenRequests)
        XCTAssertEqual(backlog.unwritten, 10)
    }

    func testReadingResumesAtHalfTheMarkNotBefore() throws {
        let connection = try StalledConnection()
        try connection.deliver(Self.tenRequests)
        try connection.deliver(Self.tenRequests)
        XCTAssertFalse(connection.socket.readRequested)
        connection.socket.clientReads(responses: 11)  // 9 unwritten: still over 8
        XCTAssertEqual(try connection.backlog().unwritten, 9)
        XCTAssertFalse(connection.socket.readRequested)
        connection.socket.clientReads(responses: 1)
        XCTAssertEqual(try connection.backlog().unwritten, 8)
        XCTAssertTrue(connection.socket.readRequested)
    }

    func testAScrapeWaitingOnASlowClientDoesNotStopReading() throws {
        let connection = try StalledConnection()
        try connection.deliver(Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        XCTAssertEqual(try connection.backlog().unwritten, 1)
        XCTAssertTrue(connection.socket.pendingBytes > 1000, "the page is pending: \(connection.socket.pendingBytes)")
        XCTAssertTrue(connection.socket.readRequested, "one big answer in flight never holds reading")
    }

    func testClosingWithAnswersUnwrittenReleasesThem() throws {
        let connection = try StalledConnection()
        try connection.deliver(Self.tenRequests)
        try connection.deliver(Self.tenRequests)
        let backlog = try connection.backlog()
        XCTAssertEqual(backlog.unwritten, 20)
        connection.socket.connectionReset()
        XCTAssertEqual(backlog.unwritten, 0, "failed writes end the wait too")
        try connection.channel.close().wait()
        XCTAssertFalse(connection.channel.isActive)
    }
}

/// The server's pipeline on an `EmbeddedChannel` with an `UnreadSocket` at its socket end.
final class StalledConnection {
    let channel = EmbeddedChannel()
    let socket = UnreadSocket()

    init() throws {
        let store = try makeServerTestStore(.ready)
        try HTTPServer.configureConnection(
            channel.pipeline.syncOperations, routes: Routes(store: store, telemetryPath: "/metrics") { nil })
        try channel.pipeline.syncOperations.addHandler(socket, position: .first)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 10150)).wait()
        channel.read()
    }

    deinit {
        socket.connectionReset()
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    func backlog() throws -> ResponseBacklog {
        try channel.pipeline.syncOperations.handler(type: ResponseBacklog.self)
    }

    /// Bytes arrive for the outstanding read request; then, as with autoRead, the channel asks
    /// for the next read.
    func deliver(_ bytes: [UInt8]) throws {
        XCTAssertTrue(socket.readRequested, "bytes arrive only when the channel asked to read")
        socket.readRequested = false
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        channel.read()
    }
}

/// The socket end of the pipeline, with a client that does not read: every write waits here
/// (as in a full send buffer) until the test lets the client read.
final class UnreadSocket: ChannelOutboundHandler {
    typealias OutboundIn = IOData

    /// A read request reached the socket and no bytes were delivered for it yet.
    var readRequested = false
    private var pending: [(bytes: ByteBuffer, promise: EventLoopPromise<Void>?)] = []
    /// The status line of every response the client has read.
    private(set) var statusLines: [String] = []

    var pendingBytes: Int { pending.reduce(0) { $0 + $1.bytes.readableBytes } }
    /// Responses pending: the writes that carry a promise are their ends (`ResponseBacklog` gives each one).
    var pendingResponses: Int { pending.filter { $0.promise != nil }.count }

    func read(context: ChannelHandlerContext) {
        readRequested = true
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data) else {
            XCTFail("the server writes byte buffers")
            return
        }
        pending.append((buffer, promise))
    }

    func flush(context: ChannelHandlerContext) {}

    func clientReadsEverything() {
        clientReads(responses: pendingResponses)
    }

    /// The client reads the first `responses` answers whole: their writes complete in order.
    func clientReads(responses: Int) {
        var left = responses
        while left > 0, !pending.isEmpty {
            let (bytes, promise) = pending.removeFirst()
            let text = String(buffer: bytes)
            if text.hasPrefix("HTTP/1.1 "), let line = text.components(separatedBy: "\r\n").first {
                statusLines.append(line)
            }
            if let promise {
                left -= 1
                promise.succeed()
            }
        }
    }

    func connectionReset() {
        let failed = pending
        pending = []
        for write in failed { write.promise?.fail(ChannelError.ioOnClosedChannel) }
    }
}
