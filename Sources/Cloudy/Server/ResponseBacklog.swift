import NIOCore
import NIOHTTP1

/// Stops reading from a connection whose answers are not being read. A client that pipelines
/// requests and never reads would otherwise have the server read its requests and queue their
/// answers in memory without end: on the server without this, 87 MB of pipelined
/// `GET /healthz` took one exporter from 27 MB to 1.1 GB resident in 30 s, and 0.96 GB stayed
/// after the client left (bench/hostile-clients, 2026-11-25).
///
/// It counts the responses of its connection that are handed to the channel but not yet written
/// to the socket (their `.end` write has not completed), and while `pauseAt` or more are
/// unwritten it holds back the channel's `read()`: nothing more is read from the socket, the
/// client's further requests wait in the kernel, and once the client reads (the writes complete)
/// and `resumeAt` or fewer remain unwritten, reading resumes. NIO's HTTP pipelining handler
/// does not bound this: it holds reads only while a response is being produced, and ours are
/// produced at once.
///
/// Why responses and not bytes (the channel's write-buffer watermarks and NIO's
/// `BackPressureHandler`): what a queued answer costs in memory is not its size. The big bodies
/// (`/metrics`, the pages) are buffers rendered once per refresh and shared by every answer, so a
/// queued 17 MB W1000 page costs a few hundred bytes, while a queued 150-byte `/healthz` answer
/// costs its head buffer and the channel's bookkeeping, several times its size. A mark in bytes
/// high enough that a scrape never trips it (above the largest page, which grows with the
/// places) lets hundreds of thousands of small answers queue first; a count never trips on a
/// scrape (one answer) and bounds the small ones. The channel's marks stay above any body
/// (`HTTPServer`), so a big scrape does not flip writability twice per answer.
///
/// What one connection can still hold: `pauseAt` answers, plus the answers to what was read
/// before the hold took effect: NIO reads up to `maxMessagesPerRead` buffers per wake-up and the
/// decoder answers every request in them, so `HTTPServer` keeps those buffers to 16 KiB (4 × 16
/// KiB of requests, ~1,500 tiny ones). Outbound only, so requests never pass through it.
final class ResponseBacklog: ChannelOutboundHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Answers unwritten at which reading stops; a client that pipelines this deep without reading
    /// is not one Prometheus or a browser would be.
    static let defaultPauseAt = 16

    let pauseAt: Int
    let resumeAt: Int
    /// Responses whose last write has not completed.
    private(set) var unwritten = 0
    /// The channel asked to read while paused; that read is issued once reading resumes.
    private(set) var readHeld = false
    private var context: ChannelHandlerContext?

    init(pauseAt: Int = defaultPauseAt, resumeAt: Int? = nil) {
        precondition(pauseAt > 0, "pauseAt must be positive")
        self.pauseAt = pauseAt
        self.resumeAt = min(resumeAt ?? pauseAt / 2, pauseAt - 1)
    }

    var isPaused: Bool { unwritten >= pauseAt }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if isPaused {
            readHeld = true
        } else {
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        unwritten += 1
        // A failed write (the connection closed) also ends the wait.
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { _ in self.responseWritten() }
        context.write(data, promise: written)
    }

    private func responseWritten() {
        unwritten -= 1
        guard readHeld, unwritten <= resumeAt, let context else { return }
        readHeld = false
        context.read()
    }
}
