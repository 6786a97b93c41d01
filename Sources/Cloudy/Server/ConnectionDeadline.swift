import NIOCore

/// Cuts connections that hold the server without asking anything: a request must arrive in
/// full within `requestTimeout` of its first byte (slowloris trickles headers a byte at a
/// time), and a keep-alive connection may sit idle between requests for `idleTimeout`.
/// Sits in front of the HTTP decoder; the request handler tells it when a request is complete.
///
/// A request only moves the deadline (a clock read); no timer is scheduled or cancelled per
/// request. One timer per connection wakes at most `requestTimeout` apart, closes the
/// connection once its deadline has passed, and otherwise sets itself again.
///
/// Inbound only, so the writes of every response skip it; and the timer holds it strongly (a
/// weak reference would give it a side table and slow every retain of it): the timer is
/// cancelled when the handler is removed, which every closed channel does.
final class ConnectionDeadline: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let requestTimeout: TimeAmount
    let idleTimeout: TimeAmount
    /// When the connection is cut; nil while a request is being answered.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var receivingRequest = false
    private var context: ChannelHandlerContext?

    init(requestTimeout: TimeAmount = .seconds(10), idleTimeout: TimeAmount = .seconds(60)) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !receivingRequest {
            receivingRequest = true
            deadline = context.eventLoop.now + requestTimeout
        }
        context.fireChannelRead(data)
    }

    /// The request handler has a whole request: the clock stops until the answer is written.
    func requestReceived() {
        deadline = nil
    }

    /// The answer is written: wait for the next request, idle.
    func responseSent() {
        receivingRequest = false
        deadline = context.map { $0.eventLoop.now + idleTimeout }
    }

    private func start() {
        guard let context, timer == nil else { return }
        deadline = context.eventLoop.now + idleTimeout
        check()
    }

    /// Closes the connection if its deadline has passed, else wakes again by the deadline and at
    /// most `requestTimeout` from now (a request may begin meanwhile and bring the deadline closer).
    private func check() {
        timer = nil
        guard let context else { return }
        let now = context.eventLoop.now
        if let deadline, deadline <= now {
            context.channel.close(promise: nil)
            return
        }
        let wake = min(deadline ?? .distantFuture, now + requestTimeout)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: wake) { self.check() }
    }
}
