import Foundation

/// Reads exposition text back into series → value (comments skipped): each line's text before
/// its last space is the series, the rest its value.
///
/// It walks the UTF-8 bytes, not `Character`s: the end-to-end tests poll `/metrics` every 50 ms
/// and parse each page, and in the suite's unoptimized build splitting a `String` into lines
/// (grapheme by grapheme) took most of a polling test's CPU.
enum Exposition {
    static func parse(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            func string(_ from: Int, _ to: Int) -> String {
                String(decoding: UnsafeBufferPointer(start: base + from, count: to - from), as: UTF8.self)
            }
            var start = 0
            while start < bytes.count {
                let end =
                    memchr(base + start, 0x0A, bytes.count - start).map {
                        base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
                    } ?? bytes.count
                var space = end - 1
                while space >= start, base[space] != UInt8(ascii: " ") { space -= 1 }
                if space >= start, base[start] != UInt8(ascii: "#"), let value = Double(string(space + 1, end)) {
                    out[string(start, space)] = value
                }
                start = end + 1
            }
        }
        return out
    }
}
