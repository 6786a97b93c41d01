import Foundation

/// What a `JSONReader` reads: failures, field names, and values of each JSON type.
extension JSONReader {
    struct Failure: Error, CustomStringConvertible {
        var message: String
        let offset: Int
        /// True when the text is not JSON; false when a value has the wrong type.
        let syntax: Bool
        var path: [String] = []

        var description: String {
            let at = "\(message) at byte \(offset)"
            return path.isEmpty ? at : path.joined(separator: ".") + ": " + at
        }
    }

    /// A field name, still in the text's bytes (or decoded, when it has escapes); a `switch`
    /// matches it against string literals without making a `String`.
    struct Key {
        let bytes: UnsafeBufferPointer<UInt8>
        let decoded: String?

        var string: String { decoded ?? String(decoding: bytes, as: UTF8.self) }

        static func ~= (pattern: StaticString, key: Key) -> Bool {
            guard key.decoded == nil else { return key.decoded == pattern.description }
            return pattern.utf8CodeUnitCount == key.bytes.count
                && memcmp(pattern.utf8Start, key.bytes.baseAddress!, key.bytes.count) == 0
        }
    }

    // MARK: Values

    mutating func readDouble() throws -> Double {
        switch peek() {
        case nil: throw syntaxError("unexpected end of text")
        case let byte?:
            guard byte == UInt8(ascii: "-") || byte.digitValue != nil else { throw typeError("expected a number") }
            return try scanNumber()
        }
    }

    /// A whole number that fits an `Int` (written as JSON allows: `3600`, `3.6e3`).
    mutating func readInt() throws -> Int {
        let start = offset
        let value = try readDouble()
        guard value == value.rounded(), abs(value) < 9.0e15 else {
            throw Failure(message: "expected a whole number", offset: start, syntax: false)
        }
        return Int(value)
    }

    mutating func readBool() throws -> Bool {
        switch peek() {
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return false
        default: throw typeError("expected true or false")
        }
    }

    mutating func readString() throws -> String {
        guard peek() == UInt8(ascii: "\"") else { throw typeError("expected a string") }
        let (bytes, escaped) = try scanString()
        return escaped ? try unescape(bytes) : String(decoding: bytes, as: UTF8.self)
    }

    /// A value that is `null` or reads as `Value`.
    mutating func readOptional<Value: JSONReadable>(_ type: Value.Type) throws -> Value? {
        try readNull() ? nil : Value(json: &self)
    }

    /// A checked string's escapes resolved (a lone surrogate becomes U+FFFD).
    func unescape(_ bytes: UnsafeBufferPointer<UInt8>) throws -> String {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        func hex(_ at: Int) -> UInt32 {
            bytes[at..<(at + 4)].reduce(0) { $0 << 4 | UInt32($1.hexValue) }
        }
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\") else {
                utf8.append(bytes[index])
                index += 1
                continue
            }
            let kind = bytes[index + 1]
            index += 2
            let simple: UInt8? =
                switch kind {
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                case UInt8(ascii: "u"): nil
                default: kind  // \" \\ \/
                }
            if let simple {
                utf8.append(simple)
                continue
            }
            flush()
            var code = hex(index)
            index += 4
            if (0xD800..<0xDC00).contains(code), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            {
                let low = hex(index + 2)
                if (0xDC00..<0xE000).contains(low) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
            }
            scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
        }
        flush()
        return String(scalars)
    }

}

extension UInt8 {
    var digitValue: UInt8? {
        self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") ? self - UInt8(ascii: "0") : nil
    }

    var isHexDigit: Bool { hexValue < 16 }

    /// 0–15 for a hex digit, else 16 or more.
    var hexValue: UInt8 {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return self - UInt8(ascii: "A") + 10
        default: return 16
        }
    }
}
