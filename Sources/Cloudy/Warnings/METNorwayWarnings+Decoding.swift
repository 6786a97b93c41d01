/// The parts of a MetAlerts 2.0 GeoJSON answer Cloudy reads.
struct METAlerts: Decodable {
    let features: [Feature]

    struct Feature: Decodable {
        let properties: Properties
        let when: When?
    }

    struct When: Decodable {
        /// `[onset, expires]`.
        let interval: [String]
    }

    struct Properties: Decodable {
        let id: String
        let status: String?
        let event: String?
        let eventAwarenessName: String?
        let severity: String?
        let certainty: String?
        /// `"2; yellow; Moderate"`: the level, its colour and CAP's word.
        let awarenessLevel: String?
        let title: String?
        let description: String?
        let instruction: String?
        /// When the hazard is expected to end (absent for some, such as forest fire danger).
        let eventEndingTime: String?

        enum CodingKeys: String, CodingKey {
            case id, status, event, eventAwarenessName, severity, certainty, title, description, instruction
            case eventEndingTime
            case awarenessLevel = "awareness_level"
        }
    }

    /// Every actual warning (tests and all-clears dropped). MET's own `severity` field gives
    /// CAP's word for the colour (yellow moderate, orange severe, red extreme); without it, the
    /// level's number does. Its window is the hazard's, as NWS's is: from `when.interval`'s
    /// first time to `eventEndingTime`, else to the interval's second time, when the message
    /// expires (the reference: prefer `eventEndingTime`; the weather may improve earlier).
    var warnings: [WeatherWarning] {
        features.filter { $0.properties.status != "Test" && !Self.isAllClear($0.properties) }.map { feature in
            let alert = feature.properties
            let interval = feature.when?.interval ?? []
            return WeatherWarning(
                id: alert.id, source: WarningSourceName.metNorway.rawValue,
                event: alert.eventAwarenessName ?? alert.event ?? "",
                severity: alert.severity.map { WarningSeverity(cap: $0) }
                    ?? Self.severity(level: alert.awarenessLevel),
                urgency: "unknown", certainty: alert.certainty ?? "unknown",
                headline: alert.title ?? "", description: alert.description ?? "",
                instruction: alert.instruction ?? "", sender: "MET Norway",
                onset: interval.first.flatMap(ISOTime.parse),
                expires: alert.eventEndingTime.flatMap(ISOTime.parse)
                    ?? (interval.count > 1 ? ISOTime.parse(interval[1]) : nil))
        }
    }

    /// A warning downgraded to green: MET's level 1, or without a level CAP's `Minor` (which MET
    /// sends only for downgrades). It says the danger is over, so it is no warning in force.
    static func isAllClear(_ alert: Properties) -> Bool {
        if let level = levelNumber(alert.awarenessLevel) { return level == "1" }
        return alert.severity.map { WarningSeverity(cap: $0) } == .minor
    }

    /// The number that starts `awareness_level` (`"2; yellow; Moderate"`: `2`).
    private static func levelNumber(_ level: String?) -> String? {
        level?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// MET's awareness levels: 2 yellow, 3 orange, 4 red.
    static func severity(level: String?) -> WarningSeverity {
        switch levelNumber(level) {
        case "2": return .moderate
        case "3": return .severe
        case "4": return .extreme
        default: return .unknown
        }
    }
}
