/// The official warnings' part of the page: for each place that asks a source (or whose weather
/// provider carries alerts), a count per severity (0 included, so "no warning" is a value), its
/// sources' health, and each warning in force with its texts on one `_info` series.
enum WarningFamilies {
    static let info = MetricDescriptor(
        "weather_warning_info", .gauge,
        "An official warning in force at a place: its source, id, event, CAP severity, urgency, certainty, "
            + "headline and sender (one line, at most 200 characters); always 1 (cached from the last refresh)")
    static let onset = MetricDescriptor(
        "weather_warning_onset_timestamp_seconds", .gauge,
        "Unix time the warned-of hazard begins (cached from the last refresh)")
    static let expires = MetricDescriptor(
        "weather_warning_expires_timestamp_seconds", .gauge,
        "Unix time the warning expires; absent when open-ended (cached from the last refresh)")
    static let perSeverity = MetricDescriptor(
        "weather_warnings", .gauge,
        "Official warnings in force at a place by CAP severity, 0 when none (cached from the last refresh)")
    static let up = MetricDescriptor(
        "weather_warnings_up", .gauge, "1 when the last ask of this warning source for this place succeeded, else 0.")

    /// The longest a text label gets: a headline is for a glance; the page has the full text.
    static let maxLabelLength = 200

    /// Adds the samples of one place. A place that asks no source and whose provider carries no
    /// alerts has none.
    static func addSamples(_ warnings: PlaceWarnings, board: WarningBoard, to page: inout MetricFamilies) {
        let (place, sources, carried, inForce) = (warnings.place, warnings.sources, warnings.carried, warnings.inForce)
        guard !sources.isEmpty || carried != nil else { return }
        let location = ("location", place)
        // Counted only while a list is known: before the first answer, and once the last one is
        // stale, "no warnings" would be a claim nobody made.
        for severity in WarningSeverity.allCases where warnings.isKnown {
            let count = warnings.countBySeverity[severity] ?? 0
            page.add(perSeverity, labels: [location, ("severity", severity.rawValue)], value: Double(count))
        }
        for source in sources {
            let isUp = board.isUp(place: place, source: source)
            page.add(up, labels: [location, ("source", source)], value: isUp.map { $0 ? 1 : 0 })
        }
        if let carried {
            page.add(up, labels: [location, ("source", carried.source)], value: carried.isUp ? 1 : 0)
        }
        for warning in inForce {
            let identity = [location, ("source", warning.source), ("id", label(warning.id))]
            page.add(
                info,
                labels: identity + [
                    ("event", label(warning.event)), ("severity", warning.severity.rawValue),
                    ("urgency", label(warning.urgency)), ("certainty", label(warning.certainty)),
                    ("headline", label(warning.headline)), ("sender", label(warning.sender)),
                ], value: 1)
            page.add(onset, labels: identity, value: warning.onset)
            page.add(expires, labels: identity, value: warning.expires)
        }
    }

    /// A source's text as a label value: on one line, runs of white space as one space, at most
    /// `maxLabelLength` characters (cut with an ellipsis). The writer escapes the rest.
    static func label(_ text: String) -> String {
        let printable = String(
            String.UnicodeScalarView(text.unicodeScalars.filter { isShown($0) || $0.properties.isWhitespace }))
        let words = printable.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
        guard words.count > maxLabelLength else { return words }
        return String(words.prefix(maxLabelLength - 1)) + "…"
    }

    /// Not a C0 or C1 control character, which no label or page can show, nor an invisible
    /// format character (a zero-width space, a byte order mark, a soft hyphen, a direction
    /// override), which makes two labels that read alike differ. The zero-width joiner and
    /// non-joiner stay: scripts and emoji need them.
    static func isShown(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return false }
        return scalar.properties.generalCategory != .format || scalar.value == 0x200C || scalar.value == 0x200D
    }
}
