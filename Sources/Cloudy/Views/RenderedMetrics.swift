import NIOCore

/// The `/metrics` body as immutable bytes, rendered once per refresh in both formats, plain and
/// gzip-ready. Every scrape hands out these same buffers and appends only the live `process_*` part.
public struct RenderedMetrics: Sendable {
    public let prometheus: ByteBuffer
    public let openMetrics: ByteBuffer
    public let prometheusGzip: GzipBody
    public let openMetricsGzip: GzipBody
    public let prometheusGzipPrefix: ByteBuffer
    public let openMetricsGzipPrefix: ByteBuffer

    public init(page: MetricsPage) {
        let families = page.sorted()
        var plain = ExpositionWriter(capacity: 64 * 1024)
        var open = ExpositionWriter(capacity: 64 * 1024)
        for family in families {
            plain.write(family, format: .prometheus)
            open.write(family, format: .openMetrics)
        }
        let allocator = ByteBufferAllocator()
        prometheus = allocator.buffer(bytes: plain.bytes)
        openMetrics = allocator.buffer(bytes: open.bytes)
        prometheusGzip = GzipBody(compressing: plain.bytes)
        openMetricsGzip = GzipBody(compressing: open.bytes)
        prometheusGzipPrefix = allocator.buffer(bytes: prometheusGzip.prefix)
        openMetricsGzipPrefix = allocator.buffer(bytes: openMetricsGzip.prefix)
    }

    public func body(_ format: ExpositionFormat) -> ByteBuffer {
        format == .prometheus ? prometheus : openMetrics
    }

    public func gzip(_ format: ExpositionFormat) -> (prefix: ByteBuffer, body: GzipBody) {
        format == .prometheus ? (prometheusGzipPrefix, prometheusGzip) : (openMetricsGzipPrefix, openMetricsGzip)
    }

    /// The live tail of a scrape: `process_*` read now, and `# EOF` for OpenMetrics.
    public static func liveTail(_ format: ExpositionFormat) -> [UInt8] {
        var writer = ExpositionWriter(capacity: 1024)
        for family in ProcessMetrics.page().sorted() {
            writer.write(family, format: format)
        }
        if format == .openMetrics { writer.writeEOF() }
        return writer.bytes
    }
}
