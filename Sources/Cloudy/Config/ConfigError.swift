/// What is wrong with a config: the field (a path like `locations[2].latitude`), the line where
/// YAML puts it, and why. Printed as `cloudy.yml:12: locations[2].latitude: must be …`.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    public var file: String?
    public var line: Int?
    /// Dotted path of the offending field; empty for errors about the whole document.
    public var field: String
    public var reason: String
    /// The files a refused web config names (its certificate, key and client CA): a reloader
    /// watches them, so the config is read again once they change (`WebConfigReloader`).
    public var namedFiles: [String] = []

    public init(file: String? = nil, line: Int? = nil, field: String, reason: String) {
        self.file = file
        self.line = line
        self.field = field
        self.reason = reason
    }

    public var description: String {
        var out = file ?? "config"
        if let line { out += ":\(line)" }
        out += ": "
        if !field.isEmpty { out += field + ": " }
        return Self.oneLine(out + reason)
    }

    /// The message on one line of plain text, as every config error is: a line break or another
    /// control character in a value it quotes (`name: "x\ny"`, an ESC that would reach the
    /// terminal) is shown as the escape that writes it (`\n`, `\u{1B}`).
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: \.breaksPlainText) else { return text }
        return text.unicodeScalars.map { $0.breaksPlainText ? $0.escaped(asASCII: true) : String($0) }.joined()
    }
}

extension Unicode.Scalar {
    /// A control character (C0, DEL, C1 such as U+0085 NEXT LINE) or a Unicode line or paragraph
    /// separator: what one line of plain text (a message, a header's value) cannot hold as is.
    var breaksPlainText: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
    }
}
