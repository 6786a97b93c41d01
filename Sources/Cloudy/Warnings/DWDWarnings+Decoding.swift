import Foundation

/// The parts of Bright Sky's `/alerts` answer Cloudy reads (English texts).
struct BrightSkyAlerts: Decodable {
    let alerts: [Alert]

    struct Alert: Decodable {
        /// DWD's CAP id (Bright Sky's own `id` changes between snapshots).
        let alertID: String
        let status: String?
        let onset: String?
        let expires: String?
        let urgency: String?
        let severity: String?
        let certainty: String?
        let eventEN: String?
        let eventDE: String?
        let headlineEN: String?
        let descriptionEN: String?
        let instructionEN: String?

        enum CodingKeys: String, CodingKey {
            case alertID = "alert_id"
            case status, onset, expires, urgency, severity, certainty
            case eventEN = "event_en"
            case eventDE = "event_de"
            case headlineEN = "headline_en"
            case descriptionEN = "description_en"
            case instructionEN = "instruction_en"
        }
    }

    /// Every actual warning (tests dropped). DWD's levels 1–4 arrive as CAP's words in Bright
    /// Sky's `severity` (minor, moderate, severe, extreme); an updated warning arrives under a
    /// new `alert_id` and the old one is no longer listed.
    var warnings: [WeatherWarning] {
        alerts.filter { $0.status != "test" }.map { alert in
            WeatherWarning(
                id: alert.alertID, source: WarningSourceName.dwd.rawValue,
                event: alert.eventEN ?? alert.eventDE ?? "",
                severity: WarningSeverity(cap: alert.severity ?? ""), urgency: alert.urgency ?? "unknown",
                certainty: alert.certainty ?? "unknown", headline: alert.headlineEN ?? "",
                description: alert.descriptionEN ?? "", instruction: alert.instructionEN ?? "",
                sender: "Deutscher Wetterdienst", onset: alert.onset.flatMap(ISOTime.parse),
                expires: alert.expires.flatMap(ISOTime.parse))
        }
    }

    private struct NotCovered: Decodable { let detail: String }

    /// Bright Sky's 404 for a point no DWD cell covers (another 404, an unknown route, is not).
    static func isOutsideGermany(_ body: [UInt8]) -> Bool {
        guard let answer = try? JSONDecoder().decode(NotCovered.self, from: Data(body)) else { return false }
        return answer.detail.contains("not covered")
    }
}
