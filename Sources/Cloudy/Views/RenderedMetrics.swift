import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The `/metrics` body, rendered once per refresh in both formats and kept as gzip members ready
/// for a scrape, which appends only the live `process_*` part. Every gzip scrape hands out these
/// same bytes.
///
/// The plain text is not kept: at 1,000 places it is 17 MB, 37 % of the exporter's resident
/// memory, while Prometheus and the other scrapers ask for gzip. A plain scrape inflates the
/// member (the first plain scrape of a W1000 page took 30 ms against 15 ms for the next one),
/// and the text is then kept for the plain scrapes that follow, until none has read it for
/// `PlainBodies.keptFor` (a timer lets it go) or the next rendering replaces this value.
///
/// The two formats spell samples alike and differ only in a few families' `# HELP`/`# TYPE`
/// lines, so the text they share is compressed once: both members are made of the same
/// `DeflatedPiece`s but for those header lines. The page is written and compressed in runs of
/// whole families (`runs(of:)`), as many at once as there are CPUs, each compressed as it is
/// written, a stretch at a time (`stretchBytes`).
public struct RenderedMetrics: Sendable {
    public let prometheusGzip: GzipBody
    public let openMetricsGzip: GzipBody
    private let tails: TailCache
    private let plain: PlainBodies

    /// `processMetrics` reads the live `process_*` families; a scrape calls it at most once a
    /// second (`TailCache.maxAge`).
    /// `clock` times how long an inflated plain text is kept (`PlainBodies`).
    /// `samplesPerRun`: the size of the runs (`runs(of:)`); tests cut small pages into many.
    public init(
        page: MetricFamilies, processMetrics: @escaping @Sendable () -> MetricFamilies,
        clock: any ExporterClock = SystemClock(), samplesPerRun: Int = RenderedMetrics.samplesPerRun
    ) {
        tails = TailCache(processMetrics: processMetrics)
        // Runs of families are written and compressed side by side, one per CPU at a time: at
        // 1,000 places this is most of a refresh's CPU, and it stands between the last answer
        // and readiness. Each run's pieces start a fresh history, which costs a few bytes each.
        let runs = Self.runs(of: page.sorted(), samplesPerRun: samplesPerRun)
        let pieces: [Pieces]
        if runs.count == 1 {
            pieces = [Self.pieces(of: runs[0])]
        } else {
            let written = NIOLockedValueBox([Pieces?](repeating: nil, count: runs.count))
            DispatchQueue.concurrentPerform(iterations: runs.count) { index in
                let pieces = Self.pieces(of: runs[index])
                written.withLockedValue { $0[index] = pieces }
            }
            pieces = written.withLockedValue { $0 }.map { $0! }
        }
        prometheusGzip = GzipBody(pieces: pieces.flatMap(\.prometheus))
        openMetricsGzip = GzipBody(pieces: pieces.flatMap(\.openMetrics))
        self.plain = PlainBodies(prometheus: prometheusGzip, openMetrics: openMetricsGzip, clock: clock)
    }

    /// About this many samples (~1.5 MB of text) are written and compressed as one run.
    public static let samplesPerRun = 20_000

    /// The sorted families cut into runs of whole families of about `samplesPerRun` samples.
    static func runs(
        of families: [MetricFamily], samplesPerRun: Int = RenderedMetrics.samplesPerRun
    ) -> [ArraySlice<MetricFamily>] {
        var runs: [ArraySlice<MetricFamily>] = []
        var start = 0
        var samples = 0
        for (index, family) in families.enumerated() {
            samples += family.samples.count
            if samples >= samplesPerRun {
                runs.append(families[start...index])
                (start, samples) = (index + 1, 0)
            }
        }
        if start < families.count || runs.isEmpty { runs.append(families[start...]) }
        return runs
    }

    /// One run of families as deflated pieces of each format.
    private struct Pieces {
        var prometheus: [DeflatedPiece] = []
        var openMetrics: [DeflatedPiece] = []
    }

    /// The text of a run is compressed a stretch of about this many bytes at a time, and the
    /// writer's room is used again for the next: a run's 2 MB of text is no longer written into
    /// room that doubled as it grew (growing it, and the fresh pages the kernel zeroed and
    /// unmapped for it, cost a sixth of a W1000 refresh's CPU).
    static let stretchBytes = 256 * 1024

    /// One run of families as deflated pieces of each format: the text both formats spell alike
    /// is compressed once, into pieces shared by both; a family's header lines that differ
    /// (a counter's name) end the shared piece and are compressed as one piece per format.
    /// A profile boundary: bench/refresh counts the calls from the runs (on every thread) as
    /// part of the "render" phase.
    @inline(never)
    private static func pieces(of families: ArraySlice<MetricFamily>) -> Pieces {
        var pieces = Pieces()
        var text = ExpositionWriter(capacity: stretchBytes + 16 * 1024)
        var openHeader = ExpositionWriter(capacity: 1024)
        // The piece both formats share, made when it is first given text (zlib's state is
        // ~256 KB to set up; a run's last piece, or one before a header, may get none).
        var shared: PieceDeflater?
        func share(_ stretch: ArraySlice<UInt8>) {
            guard !stretch.isEmpty else { return }
            if shared == nil { shared = PieceDeflater() }
            shared?.add(stretch)
        }
        /// Ends the shared piece with the text written so far.
        func endShared() {
            share(text[0..<text.count])
            text.removeAll()
            guard let piece = shared?.finish() else { return }
            pieces.prometheus.append(piece)
            pieces.openMetrics.append(piece)
            shared = nil
        }
        for family in families {
            let header = text.count
            text.writeHeader(family.descriptor, format: .prometheus)
            openHeader.removeAll()
            openHeader.writeHeader(family.descriptor, format: .openMetrics)
            if !openHeader[0..<openHeader.count].elementsEqual(text[header..<text.count]) {
                let prometheusHeader = DeflatedPiece(compressing: [text[header..<text.count]])
                text.removeLast(text.count - header)
                endShared()
                pieces.prometheus.append(prometheusHeader)
                pieces.openMetrics.append(DeflatedPiece(compressing: [openHeader[0..<openHeader.count]]))
            }
            text.writeSamples(family, flushingAt: stretchBytes) { share($0) }
        }
        endShared()
        return pieces
    }

    /// The cached Prometheus 0.0.4 text (without the live tail).
    public var prometheus: ByteBuffer { joined(plain.text(.prometheus)) }

    /// The cached OpenMetrics text (without the live tail and `# EOF`).
    public var openMetrics: ByteBuffer { joined(plain.text(.openMetrics)) }

    /// One buffer of the pieces (a copy: for tests and tools; scrapes send the pieces).
    private func joined(_ pieces: [ByteBuffer]) -> ByteBuffer {
        var whole = ByteBuffer()
        whole.reserveCapacity(pieces.reduce(0) { $0 + $1.readableBytes })
        for piece in pieces { whole.writeImmutableBuffer(piece) }
        return whole
    }

    /// The cached body (without the live tail) as buffers to send in order.
    public func body(_ format: ExpositionFormat) -> [ByteBuffer] {
        plain.text(format)
    }

    public func gzip(_ format: ExpositionFormat) -> GzipBody {
        format == .prometheus ? prometheusGzip : openMetricsGzip
    }

    /// Everything a scrape sends, in order: the cached body and the live `process_*` tail, as
    /// text or as one gzip member. The tail is read from /proc at most once per
    /// `TailCache.maxAge` (listing /proc/self/fd costs more than the rest of a scrape), so a burst
    /// of scrapes shares one reading; the gzip member is then kept whole (prefix and the suffix
    /// that completes it, one ~85 KB copy a second at W100), so a gzip scrape is one buffer.
    public func scrapeBody(_ format: ExpositionFormat, gzip: Bool) -> [ByteBuffer] {
        guard gzip else { return body(format) + [plainTail(format)] }
        let tail = tails.tail(format: format, gzip: true) { text in
            let body = self.gzip(format)
            var member = ByteBuffer()
            member.reserveCapacity(body.prefix.readableBytes + text.count + 64)
            member.writeImmutableBuffer(body.prefix)
            member.writeBytes(body.suffix(appending: text))
            return member
        }
        return [tail]
    }

    /// The live tail of a plain scrape, as text.
    private func plainTail(_ format: ExpositionFormat) -> ByteBuffer {
        tails.tail(format: format, gzip: false) { ByteBuffer(bytes: $0) }
    }

    /// How many bytes `scrapeBody` would send now, without inflating the plain text: the length
    /// of the text recorded when it was rendered, and the live tail (answers HEAD).
    public func scrapeLength(_ format: ExpositionFormat, gzip: Bool) -> Int {
        guard gzip else { return self.gzip(format).length + plainTail(format).readableBytes }
        return scrapeBody(format, gzip: true).reduce(0) { $0 + $1.readableBytes }
    }

    /// How many plain texts are kept now (inflated by plain scrapes).
    var plainTextsKept: Int { plain.keptCount }

}

/// The live tails of one rendering (the gzip ones as whole members), each kept for up to a second.
final class TailCache: Sendable {
    static let maxAge: UInt64 = 1_000_000_000  // nanoseconds

    private struct Entry {
        var readAt: UInt64
        var bytes: ByteBuffer
    }

    /// Indexed by format (prometheus 0, openMetrics 1) × 2 + gzip.
    private let entries = NIOLockedValueBox<[Entry?]>(Array(repeating: nil, count: 4))
    private let processMetrics: @Sendable () -> MetricFamilies

    init(processMetrics: @escaping @Sendable () -> MetricFamilies) {
        self.processMetrics = processMetrics
    }

    /// The live tail of a scrape: `process_*` read now, and `# EOF` for OpenMetrics.
    func liveTail(_ format: ExpositionFormat) -> [UInt8] {
        var writer = ExpositionWriter(capacity: 1024)
        for family in processMetrics().sorted() {
            writer.write(family, format: format)
        }
        if format == .openMetrics { writer.writeEOF() }
        return writer.bytes
    }

    func tail(format: ExpositionFormat, gzip: Bool, encode: ([UInt8]) -> ByteBuffer) -> ByteBuffer {
        let slot = (format == .prometheus ? 0 : 2) + (gzip ? 1 : 0)
        let now = DispatchTime.now().uptimeNanoseconds
        if let entry = entries.withLockedValue({ $0[slot] }), now &- entry.readAt < Self.maxAge {
            return entry.bytes
        }
        let bytes = encode(liveTail(format))
        entries.withLockedValue { $0[slot] = Entry(readAt: now, bytes: bytes) }
        return bytes
    }
}
