import Foundation
import NIOConcurrencyHelpers

/// The rules of an IANA time zone: its offset from UTC at any moment. Read from the system's
/// compiled zone files (`/usr/share/zoneinfo`, or `$TZDIR` as glibc reads it; Debian's `tzdata`,
/// which the Docker image installs) where they are, else from Foundation's `TimeZone`, that is
/// ICU's own copy of the rules. The files come first for memory: ICU's zone data, read on first
/// use, cost a serving W100 exporter about 1 MiB resident (bench/RESULTS.md).
struct ZoneRules: Sendable {
    private enum Source: Sendable {
        case file(TZif)
        case foundation(TimeZone)
    }

    private let source: Source

    /// Seconds east of UTC in force at `seconds` since the Unix epoch.
    func utcOffset(at seconds: Double) -> Int {
        switch source {
        case .file(let rules):
            let clamped = seconds.isFinite ? min(max(seconds, -1e15), 1e15) : 0
            return rules.utcOffset(at: Int64(clamped.rounded(.down)))
        case .foundation(let zone):
            return zone.secondsFromGMT(for: Date(timeIntervalSince1970: seconds))
        }
    }

    /// The rules of zone `name`, from its file under `directory`, else from Foundation; nil
    /// when neither knows it.
    init?(name: String, directory: String) {
        if let rules = Self.file(name, in: directory) {
            source = .file(rules)
        } else if let zone = TimeZone(identifier: name) {
            source = .foundation(zone)
        } else {
            return nil
        }
    }

    /// Whether these rules came from the zone files (for tests).
    var isFromFile: Bool {
        if case .file = source { return true }
        return false
    }

    /// `name`'s compiled rules under `directory`: nil for a name that is not a zone there (a
    /// path out of it, or spelt as no zone is, `Europe//Berlin` or `./UTC`, which the file
    /// system would take but upstreams refuse; a table such as `zone.tab`; the `posix/` and
    /// `right/` copies, which upstreams do not take as zone names), and for a file this reader
    /// does not take (one counting leap seconds).
    private static func file(_ name: String, in directory: String) -> TZif? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), parts[0] != "posix",
            parts[0] != "right", name != "posixrules", name != "localtime",
            let data = FileManager.default.contents(atPath: directory + "/" + name)
        else { return nil }
        return TZif([UInt8](data))
    }

    /// Zones asked for so far, by name: each file is read once per process. Only zones that
    /// exist are kept, so names an upstream invents cannot grow it.
    private static let known = NIOLockedValueBox<[String: ZoneRules]>([:])

    /// The system's zone files: `$TZDIR` when set, as glibc reads it.
    private static let directory = ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo"

    /// The rules of the IANA zone `name`, read once and kept; nil for a zone this machine does
    /// not know.
    static func named(_ name: String) -> ZoneRules? {
        if let rules = known.withLockedValue({ $0[name] }) { return rules }
        guard let rules = ZoneRules(name: name, directory: directory) else { return nil }
        known.withLockedValue { $0[name] = rules }
        return rules
    }
}

/// A compiled zone file (RFC 8536): the moments the offset changed, the offset after each,
/// and for moments after the last one the footer's POSIX TZ rule.
struct TZif: Sendable {
    /// Moments of change, seconds since the epoch, ascending.
    let transitions: [Int64]
    /// The offset (seconds east of UTC) in force from each transition on.
    let offsetsAfter: [Int32]
    /// The offset before the first transition (local time type 0).
    let initialOffset: Int32
    /// The rule after the last transition (the footer); nil in a version 1 file or when empty.
    let footer: POSIXZoneRule?

    /// Seconds east of UTC at `time` (seconds since the epoch).
    func utcOffset(at time: Int64) -> Int {
        guard let first = transitions.first, time >= first else {
            return transitions.isEmpty ? footer?.utcOffset(at: time) ?? Int(initialOffset) : Int(initialOffset)
        }
        if let footer, time >= transitions[transitions.count - 1] { return footer.utcOffset(at: time) }
        var low = 0
        var high = transitions.count - 1
        while low < high {  // the last transition at or before `time`
            let middle = (low + high + 1) / 2
            if transitions[middle] <= time { low = middle } else { high = middle - 1 }
        }
        return Int(offsetsAfter[low])
    }

    /// Reads `bytes` as a TZif file: its 64-bit data when it has them (version 2 and later),
    /// else the 32-bit data. Nil for anything malformed, and for leap-second files.
    init?(_ bytes: [UInt8]) {
        var reader = TZifReader(bytes: bytes)
        guard let first = reader.header() else { return nil }
        var counts = first.counts
        var timeSize = 4
        if first.version >= 2 {
            guard reader.skip(counts.blockSize(timeSize: 4)), let second = reader.header() else { return nil }
            counts = second.counts
            timeSize = 8
        }
        guard counts.types > 0, counts.leaps == 0, counts.blockSize(timeSize: timeSize) <= reader.remaining else {
            return nil
        }
        let times = (0..<counts.transitions).map { _ in reader.signed(size: timeSize) }
        let typeIndices = (0..<counts.transitions).map { _ in Int(reader.byte()) }
        let offsets: [Int32] = (0..<counts.types).map { _ in
            let offset = Int32(truncatingIfNeeded: reader.signed(size: 4))
            _ = reader.skip(2)  // isdst, abbreviation index
            return offset
        }
        _ = reader.skip(counts.characters + counts.standardIndicators + counts.universalIndicators)
        guard typeIndices.allSatisfy({ $0 < offsets.count }), zip(times, times.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        transitions = times
        offsetsAfter = typeIndices.map { offsets[$0] }
        initialOffset = offsets[0]
        if timeSize == 8 {
            guard let text = reader.footer() else { return nil }
            let rule = POSIXZoneRule(text)
            guard text.isEmpty || rule != nil else { return nil }
            footer = rule
        } else {
            footer = nil
        }
    }
}

/// Reads a TZif file's big-endian fields in order; past the end every read is zero.
private struct TZifReader {
    struct Counts {
        var universalIndicators = 0, standardIndicators = 0, leaps = 0, transitions = 0, types = 0, characters = 0

        func blockSize(timeSize: Int) -> Int {
            transitions * (timeSize + 1) + types * 6 + characters + leaps * (timeSize + 4) + standardIndicators
                + universalIndicators
        }
    }

    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func header() -> (version: Int, counts: Counts)? {
        guard remaining >= 44, bytes[position..<position + 4].elementsEqual("TZif".utf8) else { return nil }
        let version = bytes[position + 4] == 0 ? 1 : Int(bytes[position + 4]) - 0x30
        position += 20
        let fields = (0..<6).map { _ in Int(UInt32(truncatingIfNeeded: signed(size: 4))) }
        guard fields.allSatisfy({ $0 < 1 << 20 }) else { return nil }
        return (
            version,
            Counts(
                universalIndicators: fields[0], standardIndicators: fields[1], leaps: fields[2],
                transitions: fields[3], types: fields[4], characters: fields[5])
        )
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count <= remaining else { return false }
        position += count
        return true
    }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A big-endian two's-complement integer of `size` bytes.
    mutating func signed(size: Int) -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<size { value = value << 8 | UInt64(byte()) }
        let unused = UInt64(64 - size * 8)
        return Int64(bitPattern: value << unused) >> unused
    }

    /// The footer: the text between two newlines at the end; nil when they are missing.
    mutating func footer() -> String? {
        guard byte() == 0x0A, let end = bytes[position...].firstIndex(of: 0x0A) else { return nil }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }
}
