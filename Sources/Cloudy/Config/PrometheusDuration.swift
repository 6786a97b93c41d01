/// Durations written the Prometheus way: one or more `<number><unit>` parts in falling order
/// (`y`, `w`, `d`, `h`, `m`, `s`, `ms`), e.g. `30s`, `10m`, `1h30m`, `500ms`.
public enum PrometheusDuration {
    private static let units: [(suffix: String, seconds: Double)] = [
        ("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001),
    ]

    /// The longest duration Prometheus reads (a signed 64-bit count of nanoseconds, about 292
    /// years); a config may write none longer.
    public static let longest = Double(Int64.max) / 1e9

    /// Seconds, or nil when `text` is not a duration.
    public static func parse(_ text: String) -> Double? {
        let chars = Array(text.utf8)
        guard !chars.isEmpty else { return nil }
        if text == "0" { return 0 }
        var index = 0
        var total = 0.0
        var lastRank = -1
        while index < chars.count {
            var number = 0.0
            let start = index
            while index < chars.count, chars[index] >= UInt8(ascii: "0"), chars[index] <= UInt8(ascii: "9") {
                number = number * 10 + Double(chars[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index > start, index - start <= 15 else { return nil }
            var suffixEnd = index
            while suffixEnd < chars.count, chars[suffixEnd] >= UInt8(ascii: "a"), chars[suffixEnd] <= UInt8(ascii: "z")
            {
                suffixEnd += 1
            }
            let suffix = String(decoding: chars[index..<suffixEnd], as: UTF8.self)
            guard let rank = units.firstIndex(where: { $0.suffix == suffix }), rank > lastRank else { return nil }
            lastRank = rank
            total += number * units[rank].seconds
            index = suffixEnd
        }
        return total
    }

    /// The shortest Prometheus spelling of a whole number of milliseconds, e.g. `1h30m`.
    public static func format(_ seconds: Double) -> String {
        var rest = Int((seconds * 1000).rounded())
        if rest == 0 { return "0s" }
        var out = ""
        for unit in units {
            let size = Int(unit.seconds * 1000)
            if rest >= size {
                out += "\(rest / size)\(unit.suffix)"
                rest %= size
            }
        }
        return out
    }
}
