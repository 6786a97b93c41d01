import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// The exporter's HTTP/1.1 server on SwiftNIO (keep-alive, pipelining handled by NIO).
/// Binding happens in `bind()` so a taken port fails start-up before anything runs; `run()`
/// serves until graceful shutdown, then stops accepting, lets requests in flight finish and
/// closes idle connections.
public final class HTTPServer: Service, @unchecked Sendable {
    private let group: EventLoopGroup
    private let routes: Routes
    private let logger: Logger
    /// Open client connections, across every listening socket; over its maximum, closed at once.
    public let connections: ConnectionLimit
    private var channels: [(channel: Channel, quiesce: ServerQuiescingHelper)] = []
    /// Runs reloads away from the event loops (tests hold them to stop the server meanwhile).
    private let offload: HTTPRequestHandler.Offload
    /// Closed once the server has stopped: reloads and login checks still running then drop
    /// their answers, which would otherwise go to event loops about to shut down.
    let gate = EventLoopGate()

    public convenience init(
        group: EventLoopGroup, routes: Routes, logger: Logger,
        connections: ConnectionLimit = ConnectionLimit(maximum: ConnectionLimit.defaultMaximum)
    ) {
        self.init(group: group, routes: routes, logger: logger, connections: connections, offload: nil)
    }

    init(
        group: EventLoopGroup, routes: Routes, logger: Logger, connections: ConnectionLimit,
        offload: HTTPRequestHandler.Offload?
    ) {
        self.group = group
        self.routes = routes
        self.logger = logger
        self.connections = connections
        self.offload = offload ?? HTTPRequestHandler.offloadToDispatch
    }

    /// The addresses actually bound (port 0 becomes the port the kernel chose).
    public var boundAddresses: [SocketAddress] { channels.compactMap { $0.channel.localAddress } }

    public func bind(_ addresses: [ListenAddress]) async throws {
        for address in addresses {
            let hosts = address.host.map { [$0] } ?? ["::", "0.0.0.0"]
            var lastError: Error?
            for host in hosts {
                do {
                    // The helper's promise on the listening channel's own loop: whichever thread
                    // lets go of the helper last fails that promise (its deinit), and from another
                    // loop's thread at shutdown that was a task for a loop already shut down
                    // (NIO's "Cannot schedule tasks", once in ~30 failed binds; a crash to come).
                    let loop = group.next()
                    let quiesce = ServerQuiescingHelper(group: loop)
                    let channel = try await makeBootstrap(quiesce, on: loop).bind(host: host, port: address.port).get()
                    channels.append((channel, quiesce))
                    let bound = channel.localAddress.flatMap { local in
                        local.port.map { ListenAddress(host: local.ipAddress, port: $0).description }
                    }
                    logger.info("listening", metadata: ["address": "\(bound ?? address.description)"])
                    lastError = nil
                    break
                } catch {
                    lastError = error
                }
            }
            if let lastError { throw HTTPServerError(address: address, underlying: lastError) }
        }
    }

    /// Listens on `loop`; accepted connections go to every loop of the group.
    private func makeBootstrap(_ quiesce: ServerQuiescingHelper, on loop: EventLoop) -> ServerBootstrap {
        let routes = self.routes
        let connections = self.connections
        let offload = self.offload
        let gate = self.gate
        return ServerBootstrap(group: loop, childGroup: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // The limit first: a connection over it never reaches the quiescing helper.
                    try channel.pipeline.syncOperations.addHandler(connections.makeServerChannelHandler())
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            // IPPROTO_TCP's option: at SOL_SOCKET the same number is SO_DEBUG, which needs
            // CAP_NET_ADMIN, so a non-root exporter closed every connection unanswered.
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 4)
            // Requests are a few hundred bytes; reads of at most 16 KiB (NIO's default: 64 KiB)
            // bound what one wake-up reads, and answers, before the back-pressure can hold the
            // next read: 4 × 16 KiB of pipelined requests, ~1,500 tiny ones.
            .childChannelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16384)
            )
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBufferWaterMark)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configureConnection(
                        channel.pipeline.syncOperations, routes: routes, offload: offload, gate: gate)
                }
            }
    }

    /// When a connection stops being read: NIO's `BackPressureHandler` holds the channel's reads
    /// while more than `high` bytes of answers wait unwritten (the client does not read them) and
    /// reads again once they are down to `low`. Without it, one client pipelining `GET /healthz`
    /// and never reading took main's exporter from 27 MB to 1.5 GB in 15 s, and 1.25 GB stayed
    /// after it left; with it, to 39 MB (bench/hostile-clients, 2026-11-25, release binaries).
    ///
    /// The marks, measured (callgrind instructions per request, and that client's VmRSS):
    /// - A page over `high` flips the channel unwritable and back once per scrape: two events
    ///   through the pipeline and an extra flush, ~6,000 instructions, +9 % on a plain W100 scrape
    ///   (1.7 MB) at a 256 KiB mark. At 2 MiB no W100 page flips, nor a gzip W1000 page (~0.85 MB,
    ///   and Prometheus asks for gzip); a plain W1000 page (17 MB) does, at ~1 % of its cost.
    /// - A queued answer costs more memory than its bytes when it is small: a 105-byte `/healthz`
    ///   answer brings its own head buffer and pending-write entry. 2 MiB of them, ~20,000, took
    ///   the client above to +12 MB resident (256 KiB: +2 MB); marks above the largest page
    ///   (17 MB at W1000, and it grows with the places) would let ~10x more queue per connection.
    /// - Counting answers instead (a promise per answer, to learn when it is written) held memory
    ///   as tightly but cost ~9,000 instructions on every request (+16 % on `/healthz`); the
    ///   handler here costs ~900 (+1.5 %), the same with or without a flip-free page.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(
        low: 1024 * 1024, high: 2 * 1024 * 1024)

    /// The handlers of one accepted connection, in order: TLS when the web config asks for it
    /// (`ServerTLS`), the slow-client deadline, the hold on
    /// reading while answers go unread (NIO's `BackPressureHandler`, see `writeBufferWaterMark`),
    /// NIO's HTTP/1.1 codec with its error handling (a malformed request gets 400 and the
    /// connection closes), the request handler. The bootstrap calls it for every connection; tests
    /// call it on an `EmbeddedChannel`, with offloads that run reloads and bcrypt when the test says.
    static func configureConnection(
        _ pipeline: ChannelPipeline.SynchronousOperations, routes: Routes,
        offload: @escaping HTTPRequestHandler.Offload = HTTPRequestHandler.offloadToDispatch,
        offloadLogin: @escaping HTTPRequestHandler.Offload = LoginCheckQueue.offload,
        gate: EventLoopGate = EventLoopGate()
    ) throws {
        // --web.config.file with TLS: the handshake first, with the certificate read last.
        if let tls = routes.webConfig?.current().tls {
            try tls.addHandlers(to: pipeline)
        }
        let deadline = ConnectionDeadline()
        try pipeline.addHandler(deadline)
        try pipeline.addHandler(BackPressureHandler())
        // No outbound header validation: every header Cloudy sends is a constant, a number, or a
        // web config's header, whose value the loader refuses with a control character. NIO's
        // check cost ~4,900 instructions of a ~58,700-instruction gzip scrape (bench/RESULTS.md).
        try pipeline.configureHTTPServerPipeline(withErrorHandling: true, withOutboundHeaderValidation: false)
        try pipeline.addHandler(
            HTTPRequestHandler(
                routes: routes, deadline: deadline, offload: offload, offloadLogin: offloadLogin, gate: gate))
    }

    /// Closes the addresses bound so far, waiting for each: a start-up that stops before it
    /// serves (another address could not be bound) leaves nothing open on the event loops.
    public func closeBound() async {
        let channels = self.channels
        self.channels = []
        for (channel, _) in channels { try? await channel.close() }
        gate.close()
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops accepting, lets in-flight requests finish (at most `grace` seconds), closes the rest.
    public func shutdown(grace: TimeAmount = .seconds(1)) async {
        let channels = self.channels
        self.channels = []
        await withTaskGroup(of: Void.self) { tasks in
            for (channel, quiesce) in channels {
                tasks.addTask {
                    let done = channel.eventLoop.makePromise(of: Void.self)
                    quiesce.initiateShutdown(promise: done)
                    let deadline = channel.eventLoop.scheduleTask(in: grace) { done.fail(ChannelError.alreadyClosed) }
                    _ = try? await done.futureResult.get()
                    deadline.cancel()
                }
            }
        }
        gate.close()
        logger.info("server stopped")
    }
}

public struct HTTPServerError: Error, CustomStringConvertible {
    public var address: ListenAddress
    public var underlying: Error
    /// "cannot listen on 127.0.0.1:10150: Address already in use", "… unknown host web.lan (Name
    /// or service not known)": the system's words, not NIO's description of the call that failed.
    public var description: String {
        let reason =
            switch underlying {
            case let error as IOError: String(cString: strerror(error.errnoCode))
            case let error as SocketAddressError.UnknownHost: "unknown host \(error.host) (\(error.errorDescription))"
            default: "\(underlying)"
            }
        return "cannot listen on \(address): \(reason)"
    }
}
