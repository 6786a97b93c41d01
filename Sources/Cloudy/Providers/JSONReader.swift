import Foundation

/// A pull reader over one JSON text (RFC 8259), for the large answers of the batched APIs.
/// Foundation's `JSONDecoder` first maps the whole text, then decodes it through keyed containers:
/// about 850 M instructions for a W1000 refresh, as much as rendering the page. Reading each
/// field where it stands costs a tenth of that (bench/RESULTS.md, issue 28).
///
/// The reader checks the grammar as it goes; values a type does not read are skipped, and checked
/// all the same. A `Failure` says whether the text is broken (`syntax`: nothing after it can be
/// trusted) or a value is not what the type wants (the text is sound: the caller may skip the
/// value and go on), with the field path and byte offset. Failures, field names and the readers
/// of each JSON type are in `JSONReader+Values.swift`; what reads itself, in `JSONReadable.swift`.
struct JSONReader {
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
        default:
            // A number beyond a Double is still JSON, and scanned whole when that is said.
            do { _ = try scanNumber() } catch let failure as Failure where !failure.syntax {}
        }
    }

    /// The value `read` reads, or, when it has the wrong type, the failure, with the value
    /// skipped whole (its grammar checked) so that reading goes on after it. A syntax failure is
    /// thrown: nothing after it can be trusted.
    mutating func readOrSkip<Value>(_ read: (inout JSONReader) throws -> Value) throws -> Result<Value, Failure> {
        let (start, startDepth) = (offset, depth)
        do {
            return .success(try read(&self))
        } catch let failure as Failure where !failure.syntax {
            (offset, depth) = (start, startDepth)
            try skipValue()
            return .failure(failure)
        }
    }

    // MARK: Scanning

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw syntaxError("nested deeper than \(Self.maximumDepth) levels") }
    }

    mutating func skipWhitespace() {
        while offset < text.count {
            switch text[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= text.count, memcmp(literal.utf8Start, text.baseAddress! + offset, count) == 0 else {
            throw syntaxError("expected \(literal)")
        }
        offset += count
    }

    mutating func readKey() throws -> Key {
        let (bytes, escaped) = try scanString()
        return Key(bytes: bytes, decoded: escaped ? try unescape(bytes) : nil)
    }

    private mutating func skipString() throws { _ = try scanString() }

    /// A string's raw bytes between its quotes, and whether it has escapes; checks that escapes
    /// are well formed and that no control character stands unescaped.
    mutating func scanString() throws -> (UnsafeBufferPointer<UInt8>, escaped: Bool) {
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

    /// A number as JSON spells it. The usual decimals (up to 15 significant digits, no exponent)
    /// are computed exactly: the integer of their digits and a power of ten are both exact
    /// Doubles, and one IEEE division rounds correctly, as `strtod` does. Others go to `strtod`.
    mutating func scanNumber() throws -> Double {
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

    func syntaxError(_ message: String, at position: Int? = nil) -> Failure {
        Failure(message: message, offset: position ?? offset, syntax: true)
    }

    func typeError(_ message: String) -> Failure {
        Failure(message: message, offset: offset, syntax: false)
    }
}
