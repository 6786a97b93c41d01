/// ISO 8601 date-times as MET Norway (`2026-06-15T12:00:00Z`) and the warning services
/// (`2026-06-16T12:00:00-04:00`, `2026-06-15T12:00:00+00:00`, with or without fractional seconds)
/// write them, read as unix seconds. Answers are untrusted: anything else is nil, never a trap.
enum ISOTime {
    static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
            let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var position = 19
        if bytes[position] == UInt8(ascii: ".") {
            position += 1
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
        }
        guard position < bytes.count else { return nil }
        var offset = 0
        switch bytes[position] {
        case UInt8(ascii: "Z") where position == bytes.count - 1:
            break
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard bytes.count == position + 6, bytes[position + 3] == UInt8(ascii: ":"),
                let hours = number(bytes, position + 1, 2), let minutes = number(bytes, position + 4, 2),
                hours <= 18, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[position] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        let days = HTTPDate.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset)
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<start + count] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
