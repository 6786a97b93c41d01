import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// At most `maximum` client connections open at once (`--web.max-connections`); a connection
/// accepted over it is closed at once, before anything is read from it, and counted. Shared by
/// every listening socket. What it keeps (open, rejected) is read live at every scrape.
///
/// The default, 8,192: an idle connection costs ~5.5 KiB resident (bench/hostile-clients, 5,000
/// idle connections: +28 MB), so a full house of idle clients stays around 45 MB; what each one
/// can queue in unread answers is bounded by `HTTPServer.writeBufferWaterMark`. The limit never
/// exceeds what the open-file limit leaves (`effectiveMaximum`), so the listening sockets,
/// libcurl and /proc reads always find a descriptor.
public final class ConnectionLimit: Sendable {
    public static let defaultMaximum = 8192
    /// Descriptors kept for the process itself when the open-file limit lowers the cap.
    static let reservedDescriptors = 128

    public let maximum: Int
    private let counts = NIOLockedValueBox(Counts())

    struct Counts {
        var open = 0
        var rejected = 0
    }

    public init(maximum: Int) {
        precondition(maximum > 0, "the connection limit must be positive")
        self.maximum = maximum
    }

    public var open: Int { counts.withLockedValue { $0.open } }
    public var rejected: Int { counts.withLockedValue { $0.rejected } }

    /// `requested`, or less when the soft open-file limit (already raised by `RuntimeTuning`)
    /// would run out first.
    public static func effectiveMaximum(requested: Int, descriptorLimit: Int? = currentDescriptorLimit()) -> Int {
        guard let descriptorLimit else { return requested }
        return max(1, min(requested, descriptorLimit - reservedDescriptors))
    }

    public static func currentDescriptorLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return limit.rlim_cur == rlim_t.max ? nil : Int(clamping: limit.rlim_cur)
    }

    /// Takes a place for a new connection, or counts it rejected when none is left.
    func admit() -> Bool {
        counts.withLockedValue { counts in
            guard counts.open < maximum else {
                counts.rejected += 1
                return false
            }
            counts.open += 1
            return true
        }
    }

    func release() {
        counts.withLockedValue { $0.open -= 1 }
    }

    /// For the front of a listening socket's pipeline: sees every accepted connection first.
    func makeServerChannelHandler() -> AcceptedConnections {
        AcceptedConnections(limit: self)
    }

    /// Admits each accepted connection and frees its place when it closes, or closes it unread
    /// (as NIO's `ServerQuiescingHelper` closes connections accepted during shutdown).
    final class AcceptedConnections: ChannelInboundHandler {
        typealias InboundIn = Channel
        typealias InboundOut = Channel

        let limit: ConnectionLimit

        init(limit: ConnectionLimit) {
            self.limit = limit
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let connection = unwrapInboundIn(data)
            guard limit.admit() else {
                connection.close(promise: nil)
                return
            }
            connection.closeFuture.whenComplete { [limit] _ in limit.release() }
            context.fireChannelRead(data)
        }
    }

    // MARK: - Metrics (live: appended at every scrape)

    public static let openConnections = MetricDescriptor(
        "cloudy_exporter_http_open_connections", .gauge, "HTTP client connections open now.")
    public static let maxConnections = MetricDescriptor(
        "cloudy_exporter_http_max_connections", .gauge,
        "Most HTTP client connections open at once (--web.max-connections, lowered to fit the open-file limit).")
    public static let rejectedConnections = MetricDescriptor(
        "cloudy_exporter_http_connections_rejected", .counter,
        "HTTP client connections closed at once because --web.max-connections were open.")

    public func addSamples(to page: inout MetricFamilies) {
        let counts = counts.withLockedValue { $0 }
        page.add(Self.openConnections, value: Double(counts.open))
        page.add(Self.maxConnections, value: Double(maximum))
        page.add(Self.rejectedConnections, value: Double(counts.rejected), suffix: "_total")
    }
}
