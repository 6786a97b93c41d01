/// What `/readyz` says, from the places' statuses: ready once every place has had a first
/// attempt and at least one succeeded (a shard that owns no place has nothing to wait for),
/// with each place whose last refresh failed listed below, and each place held back by the
/// provider's quiet period (its reason and when it lifts).
public struct Readiness: Sendable, Equatable {
    /// Why the exporter is not ready, or nil when it is.
    public let notReadyReason: String?
    /// "Place: why its last refresh failed", one per failing place (with the quiet period in
    /// force when the failure does not already say it).
    public let placeProblems: [String]
    /// "Place: the quiet period", one per place that did not fail but waits for it.
    public let placesQuiet: [String]
    /// The body of `/readyz`, written once per rendering: "not ready: …", or "ready" with a
    /// "failing: …" line below for each failing place and a "quiet: …" line for each place the
    /// quiet period holds back, each item on one line.
    public let answer: String

    public init(_ statuses: [PlaceStatus]) {
        placeProblems = statuses.compactMap { status in
            status.lastError.map { "\(status.place.name): " + Self.withQuietPeriod($0, status.quietPeriod) }
        }
        placesQuiet = statuses.compactMap { status in
            guard status.lastError == nil, let quiet = status.quietPeriod else { return nil }
            return "\(status.place.name): \(quiet.description)"
        }
        notReadyReason = Self.notReadyReason(statuses)
        answer =
            notReadyReason.map { "not ready: " + $0.onOneLine }
            ?? (["ready"] + placeProblems.map { "failing: " + $0.onOneLine }
            + placesQuiet.map { "quiet: " + $0.onOneLine })
            .joined(separator: "\n")
    }

    /// While a paced refresh waits for room in the provider's quota: when its next batch goes.
    static func pacedNote(_ until: Double) -> String {
        "the next batch goes at \(QuietPeriod.utcTime(until)), paced to stay within the provider's quota"
    }

    /// `error`, followed by the quiet period when one is in force and `error` does not say it.
    static func withQuietPeriod(_ error: String, _ quiet: QuietPeriod?) -> String {
        guard let quiet, error != quiet.description else { return error }
        return error + "; " + quiet.description
    }

    private static func notReadyReason(_ statuses: [PlaceStatus]) -> String? {
        if statuses.isEmpty { return nil }
        let quiet = statuses.lazy.compactMap(\.quietPeriod).first
        let waiting = statuses.filter { $0.lastAttempt == nil }.count
        if waiting > 0 {
            let paced = statuses.lazy.compactMap(\.pacedUntil).first.map { "; " + pacedNote($0) }
            return "waiting for the first refresh of \(waiting) of \(statuses.count) places"
                + (quiet.map { "; " + $0.description } ?? paced ?? "")
        }
        if !statuses.contains(where: { $0.lastSuccess != nil }) {
            let reason = statuses.first?.lastError ?? "unknown error"
            return "no place has been refreshed successfully yet: " + withQuietPeriod(reason, quiet)
        }
        return nil
    }
}
