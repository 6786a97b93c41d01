import Dispatch
import NIOCore
import NIOHTTP1

/// One connection's requests: route, answer, keep the connection alive when the client asked.
/// Errors stay within the connection; a bad client never affects another.
final class HTTPRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    /// Runs blocking work (a reload reads and checks the config file) away from the event loop.
    typealias Offload = @Sendable (@escaping @Sendable () -> Void) -> Void

    static let maxRequestBody = 64 * 1024
    static let offloadToDispatch: Offload = { DispatchQueue.global().async(execute: $0) }

    private let routes: Routes
    private let deadline: ConnectionDeadline
    private let offload: Offload
    /// Runs bcrypt for a login not in the cache: `LoginCheckQueue`'s own queue.
    private let offloadLogin: Offload
    /// How the offloaded work's answer gets back to the loop: not once the server has stopped.
    private let gate: EventLoopGate
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    /// `http_server_config.headers` of the web config in force, added to every answer.
    private var extraHeaders: [(String, String)] = []

    init(
        routes: Routes, deadline: ConnectionDeadline, offload: @escaping Offload = offloadToDispatch,
        offloadLogin: @escaping Offload = LoginCheckQueue.offload, gate: EventLoopGate = EventLoopGate()
    ) {
        self.routes = routes
        self.deadline = deadline
        self.offload = offload
        self.offloadLogin = offloadLogin
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
        case .end:
            guard let head else { return }
            self.head = nil
            deadline.requestReceived()
            handle(context: context, head: head)
        }
    }

    private func handle(context: ChannelHandlerContext, head: HTTPRequestHead) {
        // --web.config.file: its headers go on every answer, a refusal for the body's size too.
        let policy = routes.webConfig?.current().policy
        if let policy { extraHeaders = policy.headers }
        if bodyBytes > Self.maxRequestBody {
            write(
                context: context, head: head, reply: .text(.payloadTooLarge, "request body too large"), forceClose: true
            )
            return
        }
        let path = Routes.path(of: head.uri)
        // --web.config.file: rate limit, then login.
        if let policy {
            switch policy.admit(path: path, authorization: head.headers.first(name: "authorization")) {
            case .allow:
                break
            case .refuse(let reply):
                write(context: context, head: head, reply: reply)
                return
            case .verify(let check):
                verifyLogin(context: context, head: head, path: path, check: check)
                return
            }
        }
        route(context: context, head: head, path: path)
    }

    /// Runs bcrypt off the event loop, on its own queue, then answers (the connection's next
    /// requests wait).
    private func verifyLogin(
        context: ChannelHandlerContext, head: HTTPRequestHead, path: String, check: @escaping @Sendable () -> Bool
    ) {
        offloaded(by: offloadLogin, context: context, check) { handler, context, verified in
            if verified {
                handler.route(context: context, head: head, path: path)
            } else {
                handler.write(context: context, head: head, reply: AccessPolicy.unauthorized())
            }
        }
    }

    /// Runs blocking `work` through `offload`, then `answer` with its result back on the
    /// connection's event loop, through the gate. Until then the connection's other requests wait
    /// (NIO's pipelining handler holds them); other connections do not.
    private func offloaded<Value: Sendable>(
        by offload: Offload, context: ChannelHandlerContext, _ work: @escaping @Sendable () -> Value,
        then answer: @escaping @Sendable (HTTPRequestHandler, ChannelHandlerContext, Value) -> Void
    ) {
        let loop = context.eventLoop
        let loopBound = NIOLoopBound((self, context), eventLoop: loop)
        let gate = self.gate
        offload {
            let value = work()
            gate.execute(on: loop) {
                let (handler, context) = loopBound.value
                answer(handler, context, value)
            }
        }
    }

    private func route(context: ChannelHandlerContext, head: HTTPRequestHead, path: String) {
        guard let endpoint = routes.endpoint(for: path) else {
            write(context: context, head: head, reply: .text(.notFound, "404 page not found"))
            return
        }
        guard endpoint.allowed.contains(head.method) else {
            let allow = endpoint.allowed.map(\.rawValue).joined(separator: ", ")
            write(
                context: context, head: head,
                reply: .text(.methodNotAllowed, "405 method not allowed", extraHeaders: [("Allow", allow)]))
            return
        }
        switch endpoint {
        case .page(let page):
            write(context: context, head: head, reply: routes.reply(to: page, head: head))
        case .reload:
            reload(context: context, head: head)
        }
    }

    /// Reloads off the event loop and answers when done.
    private func reload(context: ChannelHandlerContext, head: HTTPRequestHead) {
        offloaded(by: offload, context: context, routes.reload) { handler, context, failure in
            let reply: Reply =
                failure.map { .text(.internalServerError, "reload refused: " + $0.onOneLine) }
                ?? .text(.ok, "config reloaded")
            handler.write(context: context, head: head, reply: reply)
        }
    }

    private func write(
        context: ChannelHandlerContext, head request: HTTPRequestHead, reply: Reply, forceClose: Bool = false
    ) {
        let keepAlive = request.isKeepAlive && !forceClose
        // One array, then HTTPHeaders of it: each `HTTPHeaders.add` costs ~1,100 instructions.
        let length = reply.contentLength ?? reply.body.reduce(0) { $0 + $1.readableBytes }
        var fields = reply.headers
        if !extraHeaders.isEmpty {
            // The web config's header replaces the answer's own of that name (the HTML pages'
            // Content-Security-Policy), as the exporter toolkit sets it: never two policies.
            fields.removeAll { field in extraHeaders.contains { $0.0.lowercased() == field.0.lowercased() } }
        }
        fields.reserveCapacity(fields.count + extraHeaders.count + 2)
        fields.append(contentsOf: extraHeaders)
        fields.append(("Content-Length", String(length)))
        fields.append(("Connection", keepAlive ? "keep-alive" : "close"))
        let responseHead = HTTPResponseHead(
            version: request.version, status: reply.status, headers: HTTPHeaders(fields))
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if request.method != .HEAD {
            for part in reply.body where part.readableBytes > 0 {
                context.write(wrapOutboundOut(.body(.byteBuffer(part))), promise: nil)
            }
        }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            deadline.responseSent()
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
