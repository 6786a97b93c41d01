import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP server on 127.0.0.1 whose answers a test scripts per request: the peer the
/// libcurl client is tested against (timeouts, caps, redirects, cut bodies).
final class ScriptedHTTPServer: @unchecked Sendable {
    enum Answer: Sendable {
        case respond(status: HTTPResponseStatus, headers: [(String, String)], body: [UInt8])
        /// Sends the head and `sent` bytes but announces `announced`, then closes.
        case cutShort(announced: Int, sent: [UInt8])
        /// Never answers.
        case hang
        /// Answers with the other answer once the gate opens (at once when it is open): lets a
        /// test see several requests in flight together, without timing anything.
        indirect case held(ReleaseGate, then: Answer)
    }

    /// Holds answers back until `open()`.
    final class ReleaseGate: Sendable {
        private let state = NIOLockedValueBox<(isOpen: Bool, waiting: [@Sendable () -> Void])>((false, []))

        func whenOpen(_ action: @escaping @Sendable () -> Void) {
            let openAlready = state.withLockedValue { state in
                if !state.isOpen { state.waiting.append(action) }
                return state.isOpen
            }
            if openAlready { action() }
        }

        func open() {
            let waiting = state.withLockedValue { state in
                state.isOpen = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for action in waiting { action() }
        }
    }

    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private(set) var channel: Channel!
    /// TCP connections accepted so far.
    var connections: Int { accepted.withLockedValue { $0 } }
    private let accepted = NIOLockedValueBox(0)
    var port: Int { channel.localAddress!.port! }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `port` 0 takes a free one; a given port lets a test bring a server back where one was.
    init(port: Int = 0, _ script: @escaping @Sendable (HTTPRequestHead) -> Answer) throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [accepted] channel in
                accepted.withLockedValue { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(script: script))
                }
            }
            .bind(host: "127.0.0.1", port: port).wait()
    }

    private var stopped = false

    func stop() {
        guard !stopped else { return }
        stopped = true
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let script: @Sendable (HTTPRequestHead) -> Answer
        var head: HTTPRequestHead?

        init(script: @escaping @Sendable (HTTPRequestHead) -> Answer) { self.script = script }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                answer(script(head), context: context)
            }
        }

        func answer(_ answer: Answer, context: ChannelHandlerContext) {
            switch answer {
            case .respond(let status, let headers, let body):
                var httpHeaders = HTTPHeaders(headers)
                httpHeaders.replaceOrAdd(name: "Content-Length", value: String(body.count))
                context.write(
                    wrapOutboundOut(
                        .head(HTTPResponseHead(version: .http1_1, status: status, headers: httpHeaders))),
                    promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .cutShort(let announced, let sent):
                let headers = HTTPHeaders([("Content-Length", String(announced))])
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                    promise: nil)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: sent))))).whenComplete {
                    _ in
                    channel.close(promise: nil)
                }
            case .hang:
                break
            case .held(let gate, let then):
                let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
                let loop = context.eventLoop
                gate.whenOpen { loop.execute { bound.value.handler.answer(then, context: bound.value.context) } }
            }
        }
    }
}

extension ScriptedHTTPServer {
    /// Answers every request with what `reply` holds at that moment (status, headers, body) and
    /// records each request's head in `asked`, oldest first.
    convenience init(
        answering reply: NIOLockedValueBox<(HTTPResponseStatus, [(String, String)], [UInt8])>,
        recordingInto asked: NIOLockedValueBox<[HTTPRequestHead]>
    ) throws {
        try self.init { head in
            asked.withLockedValue { $0.append(head) }
            let (status, headers, body) = reply.withLockedValue { $0 }
            return .respond(status: status, headers: headers, body: body)
        }
    }
}
