import NIOCore

/// Cuts connections that hold the server without asking anything: a request must arrive in
/// full within `requestTimeout` of its first byte (slowloris trickles headers a byte at a
/// time), and a keep-alive connection may sit idle between requests for `idleTimeout`.
/// Sits in front of the HTTP decoder; the request handler tells it when a request is complete.
final class ConnectionDeadline: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let requestTimeout: TimeAmount
    let idleTimeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var receivingRequest = false
    private var context: ChannelHandlerContext?

    init(requestTimeout: TimeAmount = .seconds(10), idleTimeout: TimeAmount = .seconds(60)) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { arm(idleTimeout) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(idleTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !receivingRequest {
            receivingRequest = true
            arm(requestTimeout)
        }
        context.fireChannelRead(data)
    }

    /// The request handler has a whole request: the clock stops until the answer is written.
    func requestReceived() {
        deadline?.cancel()
        deadline = nil
    }

    /// The answer is written: wait for the next request, idle.
    func responseSent() {
        receivingRequest = false
        arm(idleTimeout)
    }

    private func arm(_ timeout: TimeAmount) {
        deadline?.cancel()
        guard let context else { return }
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            channel.close(promise: nil)
        }
    }
}
