extension String {
    /// The text on one line (line breaks become spaces), for plain-text answers that list one
    /// item a line: `/readyz`, a refused reload. The text comes from providers and the config.
    var onOneLine: String {
        String(map { $0.isNewline ? " " : $0 })  // "\r\n" is one Character, and a newline
    }
}
