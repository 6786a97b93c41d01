import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The exporter's HTTP/1.1 server on SwiftNIO (keep-alive, pipelining handled by NIO).
/// Binding happens in `bind()` so a taken port fails start-up before anything runs; `run()`
/// serves until graceful shutdown, then stops accepting, lets requests in flight finish and
/// closes idle connections.
public final class HTTPServer: Service, @unchecked Sendable {
    private let group: EventLoopGroup
    private let routes: Routes
    private let logger: Logger
    private var channels: [(channel: Channel, quiesce: ServerQuiescingHelper)] = []

    public init(group: EventLoopGroup, routes: Routes, logger: Logger) {
        self.group = group
        self.routes = routes
        self.logger = logger
    }

    /// The addresses actually bound (port 0 becomes the port the kernel chose).
    public var boundAddresses: [SocketAddress] { channels.compactMap { $0.channel.localAddress } }

    public func bind(_ addresses: [ListenAddress]) async throws {
        for address in addresses {
            let hosts = address.host.map { [$0] } ?? ["::", "0.0.0.0"]
            var lastError: Error?
            for host in hosts {
                do {
                    let quiesce = ServerQuiescingHelper(group: group)
                    let channel = try await makeBootstrap(quiesce).bind(host: host, port: address.port).get()
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

    private func makeBootstrap(_ quiesce: ServerQuiescingHelper) -> ServerBootstrap {
        let routes = self.routes
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 4)
            // Answers are whole buffers rendered beforehand, never streamed: nothing waits on
            // writability, so the marks sit above any body (W1000 plain is ~17 MB) and a scrape
            // does not flip the channel unwritable and back (two trips down the pipeline each).
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 30, high: 1 << 31))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configureConnection(channel.pipeline.syncOperations, routes: routes)
                }
            }
    }

    /// The handlers of one accepted connection, in order: TLS when the web config asks for it
    /// (`ServerTLS`), the slow-client deadline, NIO's HTTP/1.1 codec with its error handling (a
    /// malformed request gets 400 and the connection closes), the request handler. The bootstrap
    /// calls it for every connection; tests call it on an `EmbeddedChannel`, with an `offload`
    /// that runs reloads when the test says.
    static func configureConnection(
        _ pipeline: ChannelPipeline.SynchronousOperations, routes: Routes,
        offload: @escaping HTTPRequestHandler.Offload = HTTPRequestHandler.offloadToDispatch
    ) throws {
        // --web.config.file with TLS: the handshake first, with the certificate read last.
        if let tls = routes.webConfig?.current().tls {
            try tls.addHandlers(to: pipeline)
        }
        let deadline = ConnectionDeadline()
        try pipeline.addHandler(deadline)
        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
        try pipeline.addHandler(HTTPRequestHandler(routes: routes, deadline: deadline, offload: offload))
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
        logger.info("server stopped")
    }
}

public struct HTTPServerError: Error, CustomStringConvertible {
    public var address: ListenAddress
    public var underlying: Error
    public var description: String { "cannot listen on \(address): \(underlying)" }
}
