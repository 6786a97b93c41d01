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
}
