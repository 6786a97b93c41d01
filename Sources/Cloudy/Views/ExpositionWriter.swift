import Foundation

/// Writes metric families as exposition text. The view of the exporter: it decides nothing
/// about values or units, only spelling — escaping, TYPE/HELP lines, and the few places where
/// OpenMetrics differs from Prometheus 0.0.4 (counter family names, `# EOF`).
public struct ExpositionWriter {
    /// The text written so far (`count` bytes), then room the next writes fill in place: a write
    /// is a bounds check and a copy, not `Array.append`'s general path, which was a third of the
    /// cost of writing a W1000 page (millions of short appends; bench/RESULTS.md, issue 28).
    private var storage: [UInt8]
    public private(set) var count = 0

    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: max(capacity, 256))
    }

    /// The text written (a copy).
    public var bytes: [UInt8] { Array(storage[..<count]) }

    /// Part of the text written, without a copy.
    public subscript(range: Range<Int>) -> ArraySlice<UInt8> {
        precondition(range.upperBound <= count, "past the text written")
        return storage[range]
    }

    public mutating func write(_ family: MetricFamily, format: ExpositionFormat) {
        writeHeader(family.descriptor, format: format)
        writeSamples(family)
    }

    /// The `# HELP` and `# TYPE` lines: the only part of a family that differs between formats.
    public mutating func writeHeader(_ descriptor: MetricDescriptor, format: ExpositionFormat) {
        let typeName: String
        if format == .prometheus, descriptor.type == .counter {
            typeName = descriptor.name + "_total"
        } else {
            typeName = descriptor.name
        }
        append("# HELP ")
        append(typeName)
        append(" ")
        appendEscaped(descriptor.help, quotes: format == .openMetrics)
        append("\n# TYPE ")
        append(typeName)
        append(" ")
        append(descriptor.type.rawValue)
        append("\n")
    }

    /// The sample lines, spelled the same in both formats.
    public mutating func writeSamples(_ family: MetricFamily) {
        writeSamples(family, flushingAt: .max) { _ in }
    }

    /// The sample lines, handed to `flush` whenever `flushAt` bytes or more are written, and the
    /// writer emptied for the next: text as long as a family of 24,000 samples (2 MB) passes
    /// through a few hundred KB of room. What is left after the last flush stays in the writer.
    public mutating func writeSamples(
        _ family: MetricFamily, flushingAt flushAt: Int, to flush: (ArraySlice<UInt8>) -> Void
    ) {
        let name = Array(family.descriptor.name.utf8)
        for sample in family.samples {
            write(sample, named: name)
            if count >= flushAt {
                flush(storage[..<count])
                count = 0
            }
        }
    }

    private mutating func write(_ sample: MetricSample, named name: [UInt8]) {
        name.withUnsafeBytes { write($0) }
        if !sample.suffix.isEmpty { append(sample.suffix) }
        if !sample.labels.isEmpty {
            write(UInt8(ascii: "{"))
            for (index, label) in sample.labels.enumerated() {
                if index > 0 { write(UInt8(ascii: ",")) }
                append(label.0)
                write(UInt8(ascii: "="))
                write(UInt8(ascii: "\""))
                appendEscaped(label.1, quotes: true)
                write(UInt8(ascii: "\""))
            }
            write(UInt8(ascii: "}"))
        }
        write(UInt8(ascii: " "))
        appendValue(sample.value)
        write(UInt8(ascii: "\n"))
    }

    public mutating func writeEOF() { append("# EOF\n") }

    /// Empties the writer; its room stays for the next text.
    public mutating func removeAll() { count = 0 }

    public mutating func removeLast(_ count: Int) {
        precondition(count <= self.count, "more than the text written")
        self.count -= count
    }

    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Room for `extra` more bytes after the text.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > storage.count { grow(extra) }
    }

    /// At least doubles the room: the bytes so far are copied into a new array with `memcpy` and
    /// the rest zeroed with `memset`. Not `append(contentsOf: repeatElement(0, …))`, which an
    /// unoptimized build (the test suite's, plain and under ThreadSanitizer) runs byte by byte
    /// through generic code: it was 70 % of the CPU of a test refreshing 500 places.
    @inline(never)
    private mutating func grow(_ extra: Int) {
        let old = storage
        let size = old.count + max(extra, old.count)
        storage = [UInt8](unsafeUninitializedCapacity: size) { room, initialized in
            let start = room.baseAddress!
            old.withUnsafeBytes { _ = memcpy(start, $0.baseAddress!, $0.count) }
            memset(start + old.count, 0, size - old.count)
            initialized = size
        }
    }

    @inline(__always)
    private mutating func write(_ source: UnsafeRawBufferPointer) {
        guard let from = source.baseAddress else { return }
        reserve(source.count)
        let at = count
        storage.withUnsafeMutableBytes {
            $0.baseAddress!.advanced(by: at).copyMemory(from: from, byteCount: source.count)
        }
        count += source.count
    }

    @inline(__always)
    private mutating func write(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    /// `SampleValue.format(value)`, with whole numbers and short decimals written digit by digit
    /// (most values of a page are: timestamps, codes, percentages, tenths of a degree) instead of
    /// through a `String`.
    private mutating func appendValue(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 {
            appendDigits(Int64(value), fractionDigits: 0)
            return
        }
        // The fewest decimals (up to four) whose number reads back as `value` is its shortest
        // spelling, the one `description` gives: below 2^50 a Double's neighbours are closer
        // than a quarter of the last decimal, so no other spelling of as few digits reads back.
        // Division by an exact power of ten rounds as reading the decimal does.
        if abs(value) >= 1e-4 {
            var scale = 1.0
            for fractionDigits in 1...4 {
                scale *= 10
                let scaled = (value * scale).rounded()
                guard abs(scaled) < 0x1p50 else { break }
                if scaled / scale == value {
                    appendDigits(Int64(scaled), fractionDigits: fractionDigits)
                    return
                }
            }
        }
        append(SampleValue.format(value))
    }

    /// `number` ÷ 10^`fractionDigits` in decimal: `-12.5` for (-125, 1), `0.05` for (5, 2).
    private mutating func appendDigits(_ number: Int64, fractionDigits: Int) {
        var rest = number.magnitude
        if number < 0 { write(UInt8(ascii: "-")) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: at most 16 digits and the point
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = buffer.count
            var written = 0
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                written += 1
                if written == fractionDigits {
                    position -= 1
                    buffer[position] = UInt8(ascii: ".")
                }
            } while rest > 0 || written <= fractionDigits  // a whole part of 0 is written too
            write(UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }

    /// Backslash, newline and (in label values) double quote are the only escapes the formats have.
    private mutating func appendEscaped(_ text: String, quotes: Bool) {
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard
                !utf8.contains(where: {
                    $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") || (quotes && $0 == UInt8(ascii: "\""))
                })
            else { return false }
            write(UnsafeRawBufferPointer(utf8))
            return true
        }
        if plain { return }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"):
                write(UInt8(ascii: "\\"))
                write(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"):
                write(UInt8(ascii: "\\"))
                write(UInt8(ascii: "n"))
            case UInt8(ascii: "\"") where quotes:
                write(UInt8(ascii: "\\"))
                write(UInt8(ascii: "\""))
            default: write(byte)
            }
        }
    }
}
