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
    /// a URL or a body.
    public func scrub(_ text: String) -> String {
        guard !value.isEmpty else { return text }
        return text.replacingOccurrences(of: value, with: "<redacted>")
    }
}
