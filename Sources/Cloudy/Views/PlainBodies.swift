import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// The plain texts of one rendering, inflated from its gzip members when a plain scrape asks and
/// kept while plain scrapes keep reading them: a timer on the clock lets a text go once
/// `keptFor` passed without a read, and the next rendering lets go of all of this (the timer does
/// not hold it). Each text is held in pieces whose sizes are powers of two (NIO rounds every
/// buffer up to one), so it takes its own length and at most 64 KiB more, not up to twice it.
final class PlainBodies: Sendable {
    /// A text no scrape has read for this long is let go.
    static let keptFor: Double = 1  // seconds
    /// The smallest piece a text is held in.
    static let smallestPiece = 64 * 1024
    private static let timerQueue = DispatchQueue(label: "cloudy.plain-bodies")

    private let keptFor: Double
    private let clock: any ExporterClock

    private struct Entry {
        var readAt: Double
        var text: [ByteBuffer]
    }

    private struct State {
        /// Indexed by format: prometheus 0, openMetrics 1.
        var entries: [Entry?] = [nil, nil]
        var timer: (any ScheduledTimer)?
    }

    /// Indexed by format: prometheus 0, openMetrics 1.
    private let members: [GzipBody]
    private let state = NIOLockedValueBox(State())

    init(
        prometheus: GzipBody, openMetrics: GzipBody, keptFor: Double = PlainBodies.keptFor,
        clock: any ExporterClock = SystemClock()
    ) {
        members = [prometheus, openMetrics]
        self.keptFor = keptFor
        self.clock = clock
    }

    deinit {
        state.withLockedValue { $0.timer?.cancel() }
    }

    /// How many texts are kept now.
    var keptCount: Int { state.withLockedValue { $0.entries.count { $0 != nil } } }

    /// How many bytes the kept texts' buffers hold (their capacity).
    var keptCapacity: Int {
        state.withLockedValue { $0.entries.reduce(0) { $0 + ($1?.text.reduce(0) { $0 + $1.capacity } ?? 0) } }
    }

    /// The text of `format`, in order, as buffers to send one after another.
    func text(_ format: ExpositionFormat) -> [ByteBuffer] {
        let slot = format == .prometheus ? 0 : 1
        let now = clock.now()
        let kept = state.withLockedValue { state -> [ByteBuffer]? in
            state.entries[slot]?.readAt = now
            return state.entries[slot]?.text
        }
        if let kept { return kept }
        // Outside the lock: two first readers at once inflate it twice, harmlessly.
        let text = members[slot].inflated(pieces: Self.pieceSizes(members[slot].length))
        state.withLockedValue { state in
            state.entries[slot] = Entry(readAt: now, text: text)
            if state.timer == nil { state.timer = schedule(after: keptFor) }
        }
        return text
    }

    /// The sizes a text of `length` bytes is held in: a power of two for each bit of `length`
    /// from `smallestPiece` up, largest first, and the rest (under `smallestPiece`) last.
    static func pieceSizes(_ length: Int) -> [Int] {
        var sizes: [Int] = []
        var bit = Int.bitWidth - 1 - max(length, 1).leadingZeroBitCount
        while bit >= 0, 1 << bit >= smallestPiece {
            if length & (1 << bit) != 0 { sizes.append(1 << bit) }
            bit -= 1
        }
        let rest = length & (smallestPiece - 1)
        if rest > 0 || sizes.isEmpty { sizes.append(rest) }
        return sizes
    }

    /// Runs `letGoOfUnread` `delay` seconds from now; the timer holds this object weakly.
    private func schedule(after delay: Double) -> any ScheduledTimer {
        clock.schedule(after: delay, leeway: 0.1, on: Self.timerQueue) { [weak self] in self?.letGoOfUnread() }
    }

    /// Lets go of the texts no scrape has read for `keptFor`, and times the next look at those
    /// still read.
    func letGoOfUnread() {
        let now = clock.now()
        state.withLockedValue { state in
            state.timer?.cancel()
            state.timer = nil
            var lastRead: Double?
            for slot in state.entries.indices {
                guard let readAt = state.entries[slot]?.readAt else { continue }
                // A millisecond early counts as due: the timer fires at `readAt + keptFor`, give or take rounding.
                if now - readAt >= keptFor - 0.001 {
                    state.entries[slot] = nil
                } else {
                    lastRead = min(lastRead ?? readAt, readAt)
                }
            }
            if let lastRead { state.timer = schedule(after: lastRead + keptFor - now) }
        }
    }
}
