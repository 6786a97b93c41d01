import NIOCore
import NIOEmbedded
import XCTest

@testable import Cloudy

/// A client that pipelines requests and never reads the answers, on the real pipeline
/// (`HTTPServer.configureConnection`) over an `EmbeddedChannel` whose socket end is an
/// `UnreadSocket`: writes stay pending there until the test lets the client read them, the
/// channel turns unwritable and writable again at the server's marks as NIO's socket channel
/// does, and the channel's read requests are counted where the socket would see them.
final class BackPressureTests: XCTestCase {
    /// A hundred pipelined requests in one segment (~4 KB), as one read of a socket returns them.
    static let hundredRequests = Array(String(repeating: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", count: 100).utf8)

    func testAClientThatNeverReadsIsNoLongerReadFrom() throws {
        let connection = try StalledConnection()
        // As NIO's socket channel with autoRead: a read request, bytes, a read request, …
        var delivered = 0
        for _ in 0..<1000 where connection.socket.readRequested {
            try connection.deliver(Self.hundredRequests)
            delivered += 1
        }
        let high = HTTPServer.writeBufferWaterMark.high
        let pending = connection.socket.pendingBytes
        XCTAssertLessThan(delivered, 1000, "reading stopped")
        XCTAssertFalse(connection.socket.readRequested, "the channel's read request is held, not passed to the socket")
        XCTAssertGreaterThan(pending, high, "reading stops once the unwritten answers pass the high mark")
        XCTAssertLessThan(pending, high + 100 * 200, "…and no later than one read's answers after it")
        XCTAssertEqual(
            connection.socket.pendingAnswers, delivered * 100, "every request read is answered, none written")

        // The client reads: once the unwritten answers are down to the low mark, reading resumes.
        connection.socket.clientReads(bytes: pending - HTTPServer.writeBufferWaterMark.low - 1000)
        XCTAssertFalse(connection.socket.readRequested, "still above the low mark")
        connection.socket.clientReads(bytes: 2000)
        XCTAssertTrue(connection.socket.readRequested, "the held read reaches the socket at the low mark")
        connection.socket.clientReads(bytes: connection.socket.pendingBytes)
        XCTAssertEqual(connection.socket.statusLines.count, delivered * 100)
        XCTAssertEqual(Set(connection.socket.statusLines), ["HTTP/1.1 200 OK"])
    }

    func testAnAnswerUnderTheHighMarkWaitingOnASlowClientDoesNotHoldReading() throws {
        let connection = try StalledConnection()
        try connection.deliver(Array("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n".utf8))
        XCTAssertEqual(connection.socket.pendingAnswers, 1)
        XCTAssertGreaterThan(connection.socket.pendingBytes, 500, "the page waits unwritten")
        XCTAssertTrue(connection.socket.readRequested, "one answer under the high mark never holds reading")
    }

    func testTheMarksLetAGzipW100PageThroughWithoutFlipping() {
        // bench/README.md: a W100 page is ~85 KB gzipped (what Prometheus asks for), 1.7 MB plain.
        XCTAssertGreaterThan(HTTPServer.writeBufferWaterMark.high, 85_000 * 2)
        XCTAssertLessThan(HTTPServer.writeBufferWaterMark.low, HTTPServer.writeBufferWaterMark.high)
    }
}

/// The server's pipeline on an `EmbeddedChannel` with an `UnreadSocket` at its socket end.
final class StalledConnection {
    let channel = EmbeddedChannel()
    let socket = UnreadSocket(marks: HTTPServer.writeBufferWaterMark)

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
/// (as in a full send buffer) until the test lets the client read, and the channel's
/// writability follows the unwritten bytes across the marks, as in NIO's socket channel.
final class UnreadSocket: ChannelOutboundHandler {
    typealias OutboundIn = IOData

    let marks: ChannelOptions.Types.WriteBufferWaterMark
    /// A read request reached the socket and no bytes were delivered for it yet.
    var readRequested = false
    /// A ring, not an array: the client takes from the front thousands of times.
    private var pending = CircularBuffer<ByteBuffer>()
    private(set) var pendingBytes = 0
    private var context: ChannelHandlerContext?
    /// The status line of every answer the client has read.
    private(set) var statusLines: [String] = []

    init(marks: ChannelOptions.Types.WriteBufferWaterMark) {
        self.marks = marks
    }

    /// Answers not read yet: the unwritten buffers that begin with a status line.
    var pendingAnswers: Int { pending.filter { String(buffer: $0).hasPrefix("HTTP/1.1 ") }.count }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func read(context: ChannelHandlerContext) {
        readRequested = true
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data) else {
            XCTFail("the server writes byte buffers")
            return
        }
        pending.append(buffer)
        pendingBytes += buffer.readableBytes
        promise?.succeed()
        if pendingBytes > marks.high, let channel = context.channel as? EmbeddedChannel, channel.isWritable {
            channel.isWritable = false
            context.fireChannelWritabilityChanged()
        }
    }

    func flush(context: ChannelHandlerContext) {}

    /// The client reads `bytes` of the answers, in order.
    func clientReads(bytes: Int) {
        var left = bytes
        while left > 0, var first = pending.first {
            let taken = min(left, first.readableBytes)
            let text = String(buffer: first)
            if text.hasPrefix("HTTP/1.1 "), let line = text.components(separatedBy: "\r\n").first {
                statusLines.append(line)
            }
            first.moveReaderIndex(forwardBy: taken)
            if first.readableBytes == 0 { pending.removeFirst() } else { pending[pending.startIndex] = first }
            pendingBytes -= taken
            left -= taken
        }
        if pendingBytes < marks.low, let context, let channel = context.channel as? EmbeddedChannel,
            !channel.isWritable
        {
            channel.isWritable = true
            context.fireChannelWritabilityChanged()
        }
    }

    func connectionReset() {
        pending.removeAll()
        pendingBytes = 0
    }
}
