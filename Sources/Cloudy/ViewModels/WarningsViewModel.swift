import Foundation

/// A place's warnings in force as the pages show them: on `/`, a mark coloured by the most
/// severe one; on the place's page, each warning with its texts and its onset and expiry in the
/// place's time zone and the configured time notation. The texts are the sources' own, without
/// what a browser would act on or hide (`shownOnPage`); the templates escape them.
public struct WarningsViewModel: Sendable {
    /// The most severe warning's CAP word: the mark's colour (`warning-extreme`, …).
    public let severity: String
    /// "1 warning: Heat Advisory", "3 warnings: Wind, Rain, …".
    public let summary: String
    public let items: [Item]

    public struct Item: Sendable, Equatable {
        public let event: String
        public let severity: String
        public let headline: String
        /// "Tue 16 Jun 12:00" (or "12:00 PM") in the place's time; "–" when the source gave none.
        public let onset: String
        /// As `onset`; "further notice" when open-ended (the page says "Until" before it).
        public let expires: String
        public let description: String
        public let instruction: String?
        /// "NWS Upton NY via nws"; the service behind the source when the warning names no
        /// office ("US National Weather Service via nws"), as the alert's `sender` says.
        public let issuer: String
    }

    /// Nil when no warning is in force. `place` decides the time zone (its `timezone:`, else the
    /// weather answer's offset, else UTC).
    public init?(_ warnings: PlaceWarnings, status: PlaceStatus, notation: TimeNotation) {
        guard let first = warnings.inForce.first else { return nil }
        severity = first.severity.rawValue
        let count = warnings.inForce.count
        let events = warnings.inForce.prefix(3).map { WarningFamilies.label($0.event) }
        summary =
            "\(count) warning\(count == 1 ? "" : "s"): " + events.joined(separator: ", ") + (count > 3 ? ", …" : "")
        let offset = Self.utcOffset(status)
        items = warnings.inForce.map { warning in
            Item(
                event: WarningFamilies.label(warning.event), severity: warning.severity.rawValue,
                headline: WarningFamilies.label(warning.headline),
                onset: Self.time(warning.onset, offset: offset, notation),
                expires: warning.expires == nil
                    ? "further notice" : Self.time(warning.expires, offset: offset, notation),
                description: warning.description.shownOnPage,
                instruction: warning.instruction.isEmpty ? nil : warning.instruction.shownOnPage,
                issuer: (warning.sender.isEmpty ? Self.service(warning.source) : warning.sender.onOneLine) + " via "
                    + warning.source)
        }
    }

    /// Who stands behind a source's warnings, for one that names no issuing office.
    static func service(_ source: String) -> String {
        switch source {
        case WarningSourceName.nws.rawValue: return "US National Weather Service"
        case WarningSourceName.metNorway.rawValue: return "MET Norway"
        case WarningSourceName.dwd.rawValue: return "Deutscher Wetterdienst"
        default: return "a national weather service"
        }
    }

    /// The place's offset from UTC at a moment: its configured zone, else its weather's.
    static func utcOffset(_ status: PlaceStatus) -> @Sendable (Double) -> Int {
        ForecastTime.utcOffsets(
            zone: status.place.timezone ?? status.snapshot?.timezone, fixed: status.snapshot?.utcOffsetSeconds ?? 0)
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// "Tue 16 Jun 12:00": warnings span days, so the date is part of the time.
    static func time(_ seconds: Double?, offset: (Double) -> Int, _ notation: TimeNotation) -> String {
        guard let seconds, abs(seconds) < 1e12 else { return ValueFormat.missing }
        let local = seconds + Double(offset(seconds))
        let day = Int((local / 86400).rounded(.down))
        let (_, month, dayOfMonth) = HTTPDate.civilFromDays(day)
        let weekday = ValueFormat.weekdays[((day + 4) % 7 + 7) % 7].prefix(3)
        return "\(weekday) \(dayOfMonth) \(months[month - 1]) " + ValueFormat.clock(local, notation: notation)
    }
}
