extension String {
    /// The text on one line, for plain-text answers that list one item a line: `/readyz`, a
    /// refused reload. The text comes from providers and the config, so line breaks (U+2028 and
    /// NEL too) and tabs become spaces, and what a terminal would act on or hide is dropped:
    /// control characters (ESC clears a screen) and invisible format characters (a direction
    /// override turns the rest of the line around), as in labels (`WarningFamilies.isShown`).
    var onOneLine: String {
        var line = String.UnicodeScalarView()
        for character in self {  // "\r\n" is one Character, and a newline
            if character.isNewline || character == "\t" {
                line.append(" ")
            } else {
                line.append(contentsOf: character.unicodeScalars.filter(WarningFamilies.isShown))
            }
        }
        return String(line)
    }

    /// The text as a page shows it, line breaks kept: a source's description or instruction.
    /// The template escapes markup; what a browser would act on or hide besides is dropped as
    /// in `onOneLine` (a direction override turns the rest of the text around), and the line
    /// separators U+2028, U+2029 and NEL become line breaks.
    var shownOnPage: String {
        var text = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            switch scalar {
            case "\n", "\t": text.append(scalar)
            case "\u{2028}", "\u{2029}", "\u{85}": text.append("\n")
            default: if WarningFamilies.isShown(scalar) { text.append(scalar) }
            }
        }
        return String(text)
    }
}
