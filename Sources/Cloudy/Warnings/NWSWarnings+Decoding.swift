import Foundation

/// The parts of the NWS GeoJSON answer Cloudy reads. Every property but `id` is optional: the
/// service has added fields over time, and an alert with an odd field is still an alert.
struct NWSAlerts: Decodable {
    let features: [Feature]

    struct Feature: Decodable {
        let properties: Properties
    }

    struct Properties: Decodable {
        let id: String
        let status: String?
        let messageType: String?
        let event: String?
        let severity: String?
        let urgency: String?
        let certainty: String?
        let senderName: String?
        let headline: String?
        let description: String?
        let instruction: String?
        let effective: String?
        let onset: String?
        let expires: String?
        let ends: String?
        let references: [Reference]?
    }

    struct Reference: Decodable {
        let identifier: String
        let sent: String?
    }

    /// The alerts in force: actual ones (no tests, exercises or drafts), no cancellations, and
    /// no message another one in the answer updates. An update carries the id of the first
    /// message of its chain (the earliest it references), so the warning keeps one series
    /// across its updates; two in force that both stem from one message (an advisory and the
    /// warning it grew into, both listed) keep their own ids instead, so neither hides the
    /// other. Its window is the hazard's: `onset ?? effective` to `ends ?? expires` (`expires`
    /// alone is when this message lapses, sometimes before the hazard begins).
    var warnings: [WeatherWarning] {
        let actual = features.map(\.properties).filter { $0.status == nil || $0.status == "Actual" }
        let replaced = Set(actual.flatMap { $0.references ?? [] }.map(\.identifier))
        let inForce = actual.filter { !replaced.contains($0.id) && $0.messageType != "Cancel" }
        let chains = inForce.map { alert in
            (alert.references ?? []).min {
                ($0.sent.flatMap(ISOTime.parse) ?? 0) < ($1.sent.flatMap(ISOTime.parse) ?? 0)
            }?.identifier ?? alert.id
        }
        let shared = Dictionary(chains.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }
        return zip(inForce, chains).map { alert, chain in
            WeatherWarning(
                id: shared[chain] == nil ? chain : alert.id, source: WarningSourceName.nws.rawValue,
                event: alert.event ?? "", severity: WarningSeverity(cap: alert.severity ?? ""),
                urgency: alert.urgency ?? "unknown", certainty: alert.certainty ?? "unknown",
                headline: alert.headline ?? alert.event ?? "", description: alert.description ?? "",
                instruction: alert.instruction ?? "", sender: alert.senderName ?? "",
                onset: (alert.onset ?? alert.effective).flatMap(ISOTime.parse),
                expires: (alert.ends ?? alert.expires).flatMap(ISOTime.parse))
        }
    }
}

/// The service's own error answer, an RFC 7807 problem document (`type`, `title`, `detail`…).
struct NWSProblem: Decodable {
    let type: String?
    let title: String?
    let detail: String?

    /// The problem document of an answer, when the service sent one (`application/problem+json`
    /// with a `type` or `title`); nil for another server's page or JSON (a wrong `url:`, a proxy).
    static func of(_ response: HTTPResponse) -> NWSProblem? {
        guard response.mediaType == "application/problem+json",
            let problem = try? JSONDecoder().decode(NWSProblem.self, from: Data(response.body)),
            problem.type != nil || problem.title != nil
        else { return nil }
        return problem
    }

    /// Whether the service says the path is none of its own ("'/alerts/alerts/active' is not a
    /// valid resource path"): a wrong `url:` on the real host, not a point outside its area. Its
    /// `…/problems/NotFound` alone says no more than "no data" (NWS answers so on valid paths).
    var isUnknownPath: Bool { detail?.contains("is not a valid resource path") ?? false }
}
