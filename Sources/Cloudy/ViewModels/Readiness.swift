/// What `/readyz` says, from the places' statuses: ready once every place has had a first
/// attempt and at least one succeeded (a shard that owns no place has nothing to wait for),
/// with each place whose last refresh failed listed below.
public struct Readiness: Sendable, Equatable {
    /// Why the exporter is not ready, or nil when it is.
    public let notReadyReason: String?
    /// "Place: why its last refresh failed", one per failing place.
    public let placeProblems: [String]
    /// The body of `/readyz`, written once per rendering: "not ready: …", or "ready" with a
    /// "failing: …" line below for each failing place, each item on one line.
    public let answer: String

    public init(_ statuses: [PlaceStatus]) {
        placeProblems = statuses.compactMap { status in status.lastError.map { "\(status.place.name): \($0)" } }
        notReadyReason = Self.notReadyReason(statuses)
        answer =
            notReadyReason.map { "not ready: " + $0.onOneLine }
            ?? (["ready"] + placeProblems.map { "failing: " + $0.onOneLine }).joined(separator: "\n")
    }

    private static func notReadyReason(_ statuses: [PlaceStatus]) -> String? {
        if statuses.isEmpty { return nil }
        let waiting = statuses.filter { $0.lastAttempt == nil }.count
        if waiting > 0 {
            return "waiting for the first refresh of \(waiting) of \(statuses.count) places"
        }
        if !statuses.contains(where: { $0.lastSuccess != nil }) {
            let reason = statuses.first?.lastError ?? "unknown error"
            return "no place has been refreshed successfully yet: \(reason)"
        }
        return nil
    }
}
