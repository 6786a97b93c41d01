import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import XCTest

@testable import Cloudy

/// One client connection to the server, in-process: an `EmbeddedChannel` with the pipeline
/// `HTTPServer` builds for every accepted connection (deadline, NIO's HTTP/1.1 codec,
/// `HTTPRequestHandler` and `Routes`). Requests go in as the bytes a client sends; the bytes the
/// server writes are parsed back into responses. Nothing runs by itself: time moves only with
/// `advanceTime(by:)`, and a reload or a bcrypt the handler hands off the event loop waits until
/// `runOffloadedWork()`.
final class EmbeddedHTTPConnection {
    struct Response {
        var version: String
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        /// The first value of a header, by case-insensitive name.
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The headers as written, `Name: value`, in order.
        var headerLines: [String] { headers.map { "\($0.name): \($0.value)" } }
    }

    let channel = EmbeddedChannel()
    private let offloaded = NIOLockedValueBox<[@Sendable () -> Void]>([])
    /// Bytes the server wrote that are not yet parsed into a response.
    private var unread: [UInt8] = []
    /// Methods of the requests sent with `request`, oldest first, whose answers are not read yet
    /// (an answer to HEAD has a Content-Length but no body).
    private var pendingMethods: [String] = []

    init(routes: Routes) throws {
        let offloaded = self.offloaded
        let offload: HTTPRequestHandler.Offload = { work in offloaded.withLockedValue { $0.append(work) } }
        try HTTPServer.configureConnection(
            channel.pipeline.syncOperations, routes: routes, offload: offload, offloadLogin: offload)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 10150)).wait()
    }

    /// A connection to a server whose store is in `state` (see `makeServerTestStore`).
    convenience init(
        _ state: ServerTestStoreState = .ready, telemetryPath: String = "/metrics",
        reload: ReloadRecorder = ReloadRecorder()
    ) throws {
        let store = try makeServerTestStore(state, telemetryPath: telemetryPath)
        try self.init(routes: Routes(store: store, telemetryPath: telemetryPath, reload: reload.reload))
    }

    deinit {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    var isOpen: Bool { channel.isActive }

    /// Raw bytes from the client, as they would arrive on the socket.
    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        try channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// Sends one HTTP/1.1 request (with `Host`, and `Content-Length` when there is a body).
    func send(
        _ method: String, _ path: String, headers: [String] = [], body: [UInt8] = [], version: String = "HTTP/1.1"
    ) throws {
        try send(Array(encode(method, path, headers: headers, body: body, version: version)))
    }

    /// Sends several requests in one write, as a pipelining client does; answers are read in order.
    func sendPipelined(_ requests: [(method: String, path: String, headers: [String])]) throws {
        try send(requests.flatMap { encode($0.method, $0.path, headers: $0.headers, body: [], version: "HTTP/1.1") })
    }

    /// One request's bytes; remembers its method, since an answer to HEAD has no body to read.
    private func encode(
        _ method: String, _ path: String, headers: [String], body: [UInt8], version: String
    ) -> [UInt8] {
        var head = "\(method) \(path) \(version)\r\nHost: 127.0.0.1:10150\r\n"
        for header in headers { head += header + "\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        pendingMethods.append(method)
        return Array((head + "\r\n").utf8) + body
    }

    /// Sends one request and returns its answer, which must be complete.
    func request(
        _ method: String, _ path: String, headers: [String] = [], body: [UInt8] = [],
        version: String = "HTTP/1.1", file: StaticString = #filePath, line: UInt = #line
    ) throws -> Response {
        try send(method, path, headers: headers, body: body, version: version)
        return try XCTUnwrap(try readResponse(), "no whole answer to \(method) \(path)", file: file, line: line)
    }

    func request(
        _ path: String, headers: [String] = [], version: String = "HTTP/1.1",
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Response {
        try request("GET", path, headers: headers, version: version, file: file, line: line)
    }

    /// The next whole response the server wrote, or nil if there is none (yet).
    func readResponse() throws -> Response? {
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            unread += buffer.readableBytesView
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let headEnd = unread.indices.first(where: { unread[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: unread[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            throw Failure("not a status line: \(lines[0])")
        }
        let headers = lines.dropFirst().map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        var response = Response(version: String(statusLine[0]), status: status, headers: headers, body: [])
        let bodyStart = headEnd + separator.count
        let isHEAD = pendingMethods.first == "HEAD"
        let length = isHEAD ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        guard unread.count >= bodyStart + length else { return nil }
        response.body = Array(unread[bodyStart..<bodyStart + length])
        unread.removeFirst(bodyStart + length)
        if !pendingMethods.isEmpty { pendingMethods.removeFirst() }
        return response
    }

    /// Bytes the server wrote past the last whole response (none, after a HEAD done right).
    var unparsedBytes: Int {
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
            unread += buffer.readableBytesView
        }
        return unread.count
    }

    /// Moves the event loop's clock, running the timers that fall due.
    func advanceTime(by amount: TimeAmount) {
        channel.embeddedEventLoop.advanceTime(by: amount)
    }

    /// How many pieces of work the handler has handed off the event loop and that have not run.
    var offloadedWorkCount: Int { offloaded.withLockedValue { $0.count } }

    /// Runs, on this thread (the embedded event loop's), the work the handler handed off.
    func runOffloadedWork() {
        let work = offloaded.withLockedValue { work in
            defer { work = [] }
            return work
        }
        for job in work { job() }
        channel.embeddedEventLoop.run()
    }
}
