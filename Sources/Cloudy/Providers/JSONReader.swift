import Foundation

/// A type read straight from JSON bytes, field by field, without building a document first.
protocol JSONReadable {
    init(json: inout JSONReader) throws
}

/// A section of an answer whose fields Cloudy reads are all of one type (numbers, series or unit
/// names), read by its table of field names (the API's own); fields not in the table are skipped,
/// and a field that is null or absent stays nil.
protocol JSONSection: JSONReadable {
    associatedtype Field: JSONReadable
    init()
    static var fields: [(name: StaticString, path: WritableKeyPath<Self, Field?> & Sendable)] { get }
}

extension JSONSection {
    init(json: inout JSONReader) throws {
        var section = Self()
        try json.readObject { key, json in
            guard let field = Self.fields.first(where: { $0.name ~= key }) else { return try json.skipValue() }
            section[keyPath: field.path] = try json.readOptional(Field.self)
        }
        self = section
    }
}

extension Double: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readDouble() }
}

extension String: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readString() }
}

/// A pull reader over one JSON text (RFC 8259), for the large answers of the batched APIs.
/// Foundation's `JSONDecoder` first maps the whole text, then decodes it through keyed containers:
/// about 850 M instructions for a W1000 refresh, as much as rendering the page. Reading each
/// field where it stands costs a tenth of that (bench/RESULTS.md, issue 28).
///
/// The reader checks the grammar as it goes; values a type does not read are skipped, and checked
/// all the same. A `Failure` says whether the text is broken (`syntax`: nothing after it can be
/// trusted) or a value is not what the type wants (the text is sound: the caller may skip the
/// value and go on), with the field path and byte offset.
struct JSONReader {
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
        fileprivate let bytes: UnsafeBufferPointer<UInt8>
        fileprivate let decoded: String?

        var string: String { decoded ?? String(decoding: bytes, as: UTF8.self) }

        static func ~= (pattern: StaticString, key: Key) -> Bool {
            guard key.decoded == nil else { return key.decoded == pattern.description }
            return pattern.utf8CodeUnitCount == key.bytes.count
                && memcmp(pattern.utf8Start, key.bytes.baseAddress!, key.bytes.count) == 0
        }
    }

    /// Deeper than this is refused rather than skipped by recursion (Foundation's limit too).
    static let maximumDepth = 512

    private let text: UnsafeBufferPointer<UInt8>
    private(set) var offset = 0
    private var depth = 0

    /// Reads `text` with `body`, which must read exactly one value; anything but whitespace after
    /// it is a syntax failure.
    static func read<Value>(_ text: [UInt8], _ body: (inout JSONReader) throws -> Value) throws -> Value {
        try text.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(text: buffer)
            let value = try body(&reader)
            reader.skipWhitespace()
            if reader.offset < buffer.count { throw reader.syntaxError("unexpected text after the value") }
            return value
        }
    }

    private init(text: UnsafeBufferPointer<UInt8>) {
        self.text = text
    }

    // MARK: Structure

    /// The next value's first byte (after whitespace), or nil at the end of the text.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < text.count ? text[offset] : nil
    }

    /// True (and consumed) when the next value is `null`.
    mutating func readNull() throws -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try expectLiteral("null")
        return true
    }

    /// An object: `field` is called with each name and must read (or skip) its value. A failure
    /// inside a field's value gains the field's name in its path. A comma before the closing
    /// brace is let pass, as Foundation's parser lets it.
    mutating func readObject(_ field: (Key, inout JSONReader) throws -> Void) throws {
        guard peek() == UInt8(ascii: "{") else { throw typeError("expected an object") }
        try enter()
        offset += 1
        while !close(UInt8(ascii: "}")) {
            guard peek() == UInt8(ascii: "\"") else { throw syntaxError("expected a field name") }
            let key = try readKey()
            guard peek() == UInt8(ascii: ":") else { throw syntaxError("expected ':' after a field name") }
            offset += 1
            do {
                try field(key, &self)
            } catch var failure as Failure {
                failure.path.insert(key.string, at: 0)
                throw failure
            }
            guard try !separate(UInt8(ascii: "}")) else { return }
        }
    }

    /// An array: `element` is called once per element and must read (or skip) it.
    mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        guard peek() == UInt8(ascii: "[") else { throw typeError("expected an array") }
        try enter()
        offset += 1
        while !close(UInt8(ascii: "]")) {
            try element(&self)
            guard try !separate(UInt8(ascii: "]")) else { return }
        }
    }

    /// True (and the container left) when `closing` comes next: the container is empty, or its
    /// last member had a trailing comma.
    private mutating func close(_ closing: UInt8) -> Bool {
        guard peek() == closing else { return false }
        offset += 1
        depth -= 1
        return true
    }

    /// After a member: true (and the container left) at `closing`, false after a comma.
    private mutating func separate(_ closing: UInt8) throws -> Bool {
        switch peek() {
        case UInt8(ascii: ","):
            offset += 1
            return false
        case closing:
            offset += 1
            depth -= 1
            return true
        default:
            let name = closing == UInt8(ascii: "}") ? "an object" : "an array"
            throw syntaxError("expected ',' or '\(String(UnicodeScalar(closing)))' in \(name)")
        }
    }

    /// Skips one value of any type, checking its grammar.
    mutating func skipValue() throws {
        switch peek() {
        case UInt8(ascii: "{"): try readObject { _, json in try json.skipValue() }
        case UInt8(ascii: "["): try readArray { json in try json.skipValue() }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case nil: throw syntaxError("unexpected end of text")
        default: _ = try scanNumber()
        }
    }

    /// Rewinds to `offset` (an earlier value's start) to skip that value after a type failure.
    mutating func rewind(to offset: Int, depth: Int) {
        self.offset = offset
        self.depth = depth
    }

    var currentDepth: Int { depth }

    // MARK: Values

    mutating func readDouble() throws -> Double {
        switch peek() {
        case nil: throw syntaxError("unexpected end of text")
        case let byte?:
            guard byte == UInt8(ascii: "-") || byte.digitValue != nil else { throw typeError("expected a number") }
            return try scanNumber()
        }
    }

    mutating func readOptionalDouble() throws -> Double? {
        try readNull() ? nil : readDouble()
    }

    /// A whole number that fits an `Int` (written as JSON allows: `3600`, `3.6e3`).
    mutating func readOptionalInt() throws -> Int? {
        guard !(try readNull()) else { return nil }
        let start = offset
        let value = try readDouble()
        guard value == value.rounded(), abs(value) < 9.0e15 else {
            throw Failure(message: "expected a whole number", offset: start, syntax: false)
        }
        return Int(value)
    }

    mutating func readOptionalBool() throws -> Bool? {
        switch peek() {
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return false
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return nil
        default: throw typeError("expected true or false")
        }
    }

    mutating func readString() throws -> String {
        guard peek() == UInt8(ascii: "\"") else { throw typeError("expected a string") }
        let (bytes, escaped) = try scanString()
        return escaped ? try unescape(bytes) : String(decoding: bytes, as: UTF8.self)
    }

    mutating func readOptionalString() throws -> String? {
        try readNull() ? nil : readString()
    }

    /// A value that is `null` or reads as `Value`.
    mutating func readOptional<Value: JSONReadable>(_ type: Value.Type) throws -> Value? {
        try readNull() ? nil : Value(json: &self)
    }

    /// An object whose every value is a string (or null), such as a section's units.
    mutating func readOptionalStrings() throws -> [String: String]? {
        guard !(try readNull()) else { return nil }
        var strings: [String: String] = [:]
        try readObject { key, json in strings[key.string] = try json.readString() }
        return strings
    }

    // MARK: Scanning

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw syntaxError("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func skipWhitespace() {
        while offset < text.count {
            switch text[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= text.count, memcmp(literal.utf8Start, text.baseAddress! + offset, count) == 0 else {
            throw syntaxError("expected \(literal)")
        }
        offset += count
    }

    private mutating func readKey() throws -> Key {
        let (bytes, escaped) = try scanString()
        return Key(bytes: bytes, decoded: escaped ? try unescape(bytes) : nil)
    }

    private mutating func skipString() throws { _ = try scanString() }

    /// A string's raw bytes between its quotes, and whether it has escapes; checks that escapes
    /// are well formed and that no control character stands unescaped.
    private mutating func scanString() throws -> (UnsafeBufferPointer<UInt8>, escaped: Bool) {
        offset += 1
        let start = offset
        var escaped = false
        while offset < text.count {
            let byte = text[offset]
            switch byte {
            case UInt8(ascii: "\""):
                let bytes = UnsafeBufferPointer(rebasing: text[start..<offset])
                offset += 1
                return (bytes, escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                guard offset + 1 < text.count else { throw syntaxError("unterminated string") }
                switch text[offset + 1] {
                case UInt8(ascii: "u"):
                    guard offset + 6 <= text.count, text[(offset + 2)..<(offset + 6)].allSatisfy(\.isHexDigit) else {
                        throw syntaxError("bad \\u escape")
                    }
                    offset += 6
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    offset += 2
                default: throw syntaxError("bad escape in a string")
                }
            case 0..<0x20: throw syntaxError("control character in a string")
            default: offset += 1
            }
        }
        throw syntaxError("unterminated string")
    }

    /// A checked string's escapes resolved (a lone surrogate becomes U+FFFD).
    private func unescape(_ bytes: UnsafeBufferPointer<UInt8>) throws -> String {
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

    /// A number as JSON spells it. The usual decimals (up to 15 significant digits, no exponent)
    /// are computed exactly: the integer of their digits and a power of ten are both exact
    /// Doubles, and one IEEE division rounds correctly, as `strtod` does. Others go to `strtod`.
    private mutating func scanNumber() throws -> Double {
        let start = offset
        var negative = false
        if text[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        let integerStart = offset
        while offset < text.count, let digit = text[offset].digitValue {
            mantissa = mantissa &* 10 &+ UInt64(digit)
            digits += 1
            offset += 1
        }
        guard offset > integerStart else { throw syntaxError("bad number", at: start) }
        if text[integerStart] == UInt8(ascii: "0"), offset - integerStart > 1 {
            throw syntaxError("bad number (leading zero)", at: start)
        }
        if offset < text.count, text[offset] == UInt8(ascii: ".") {
            offset += 1
            let fractionStart = offset
            while offset < text.count, let digit = text[offset].digitValue {
                mantissa = mantissa &* 10 &+ UInt64(digit)
                digits += 1
                fractionDigits += 1
                offset += 1
            }
            guard offset > fractionStart else { throw syntaxError("bad number", at: start) }
        }
        var exponent = false
        if offset < text.count, text[offset] | 0x20 == UInt8(ascii: "e") {
            exponent = true
            offset += 1
            if offset < text.count, text[offset] == UInt8(ascii: "+") || text[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            let exponentStart = offset
            while offset < text.count, text[offset].digitValue != nil { offset += 1 }
            guard offset > exponentStart else { throw syntaxError("bad number", at: start) }
        }
        if !exponent, digits <= 15, fractionDigits < Self.powersOfTen.count {
            let magnitude = Double(mantissa) / Self.powersOfTen[fractionDigits]
            return negative ? -magnitude : magnitude
        }
        let spelled = String(decoding: UnsafeBufferPointer(rebasing: text[start..<offset]), as: UTF8.self)
        guard let value = Double(spelled), value.isFinite else {
            throw Failure(message: "number out of range", offset: start, syntax: false)
        }
        return value
    }

    /// 10⁰ … 10²², every one exact in a Double.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { product, _ in product * 10 }
    }

    private func syntaxError(_ message: String, at position: Int? = nil) -> Failure {
        Failure(message: message, offset: position ?? offset, syntax: true)
    }

    private func typeError(_ message: String) -> Failure {
        Failure(message: message, offset: offset, syntax: false)
    }
}

extension UInt8 {
    fileprivate var digitValue: UInt8? {
        self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") ? self - UInt8(ascii: "0") : nil
    }

    fileprivate var isHexDigit: Bool { hexValue < 16 }

    /// 0–15 for a hex digit, else 16 or more.
    fileprivate var hexValue: UInt8 {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return self - UInt8(ascii: "A") + 10
        default: return 16
        }
    }
}
