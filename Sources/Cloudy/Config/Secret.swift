/// An API key. Its text is reachable only through `reveal` at the one place that sends it;
/// printing, logging or interpolating a `Secret` gives `<redacted>`.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let value: String

    public init(_ value: String) {
        self.value = value
    }

    public var reveal: String { value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    /// `text` with every occurrence of the key replaced, for error messages that might echo
    /// a URL or a body. A short key (a test's `k`, under `gluedBelow` characters) is replaced
    /// only where no letter or digit touches it (in a path, after `appid=`), so the words around
    /// it stay readable: `dark-sky`, not `dar<redacted>-s<redacted>y`.
    public func scrub(_ text: String) -> String {
        guard !value.isEmpty else { return text }
        guard value.count < Self.gluedBelow else { return text.replacingOccurrences(of: value, with: "<redacted>") }
        var scrubbed = ""
        var rest = text[...]
        while let found = rest.range(of: value) {
            let before = found.lowerBound > text.startIndex ? text[text.index(before: found.lowerBound)] : nil
            let after = found.upperBound < text.endIndex ? text[found.upperBound] : nil
            let glued = [before, after].contains { $0.map { $0.isLetter || $0.isNumber } ?? false }
            scrubbed += rest[..<found.lowerBound]
            // Glued: only its first character is passed, as the key may also start further on.
            let passed = glued ? text.index(after: found.lowerBound) : found.upperBound
            scrubbed += glued ? String(text[found.lowerBound..<passed]) : "<redacted>"
            rest = rest[passed...]
        }
        return scrubbed + rest
    }

    /// The key's fingerprint, `sha256:` and the first 16 hex digits of its SHA-256: what
    /// quota.json keeps to tell one key's quota from another's, never the key itself.
    public var fingerprint: String {
        let hex = SHA256.digest(Array(value.utf8)).prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }
        return "sha256:" + hex.joined()
    }

    /// Keys this long or longer (every real provider's) are replaced wherever they occur.
    static let gluedBelow = 8
}
