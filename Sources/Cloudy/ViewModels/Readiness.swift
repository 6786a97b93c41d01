/// What `/readyz` says, from the places' statuses: ready once every place has had a first
/// attempt and at least one succeeded (a shard that owns no place has nothing to wait for),
/// with each place whose last refresh failed listed below, and each place held back by the
/// provider's quiet period (its reason and when it lifts). Once ready, a place a reload adds
/// does not take that back while another place has weather: it is listed as waiting.
public struct Readiness: Sendable, Equatable {
    /// Why the exporter is not ready, or nil when it is.
    public let notReadyReason: String?
    /// "Place: why its last refresh failed", one per failing place (with the quiet period in
    /// force when the failure does not already say it).
    public let placeProblems: [String]
    /// "Place: the quiet period", one per place that did not fail but waits for it.
    public let placesQuiet: [String]
    /// "Place: waiting for the first refresh", one per place a reload added to a ready exporter
    /// that has not been asked yet.
    public let placesWaiting: [String]
    /// The body of `/readyz`, written once per rendering: "not ready: …", or "ready" with a
    /// "failing: …" line below for each failing place, a "quiet: …" line for each place the
    /// quiet period holds back and a "waiting: …" line for each place added since, each item on
    /// one line.
    public let answer: String

    /// `wasReady`: whether the exporter has been ready since it started.
    public init(_ statuses: [PlaceStatus], wasReady: Bool = false) {
        placeProblems = statuses.compactMap { status in
            status.lastError.map { "\(status.place.name): " + Self.withQuietPeriod($0, status.quietPeriod) }
        }
        placesQuiet = statuses.compactMap { status in
            // A place not asked yet waits (its line says the quiet period too).
            guard status.lastError == nil, status.lastAttempt != nil, let quiet = status.quietPeriod else {
                return nil
            }
            return "\(status.place.name): \(quiet.description)"
        }
        // A place a reload added to a ready exporter waits without taking readiness away.
        let staysReady = wasReady && statuses.contains { $0.lastSuccess != nil }
        placesWaiting =
            staysReady ? statuses.filter { $0.lastAttempt == nil }.map { "\($0.place.name): " + Self.waiting($0) } : []
        notReadyReason = Self.notReadyReason(statuses, waitingTakesReadiness: !staysReady)
        answer =
            notReadyReason.map { "not ready: " + $0.onOneLine }
            ?? (["ready"] + placeProblems.map { "failing: " + $0.onOneLine }
            + placesQuiet.map { "quiet: " + $0.onOneLine } + placesWaiting.map { "waiting: " + $0.onOneLine })
            .joined(separator: "\n")
    }

    /// What a place that has not been asked yet waits for: "waiting for the first refresh",
    /// with the quiet period in force or, while a paced refresh waits, when its batch goes.
    static func waiting(_ status: PlaceStatus) -> String {
        let note = status.quietPeriod?.description ?? status.pacedUntil.map(pacedNote)
        return "waiting for the first refresh" + (note.map { "; " + $0 } ?? "")
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

    private static func notReadyReason(_ statuses: [PlaceStatus], waitingTakesReadiness: Bool) -> String? {
        if statuses.isEmpty { return nil }
        let quiet = statuses.lazy.compactMap(\.quietPeriod).first
        let waiting = statuses.filter { $0.lastAttempt == nil }.count
        if waiting > 0, waitingTakesReadiness {
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
