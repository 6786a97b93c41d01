/// The warnings each place's sources last listed, and what of them is in force at a moment. A
/// value: the refresh records outcomes into it and the page is rendered from it, with the time
/// passed in, so its rules are tested by moving a clock:
/// - a successful ask replaces the source's list for the place: a warning no longer listed
///   (cancelled, or replaced by an update under another id) is gone at once;
/// - one id is one warning: an update listed under the same id replaces it, never doubles it;
/// - a warning whose expiry has passed is not in force, even while the source still lists it;
/// - a failed ask keeps the last list, each warning until its own expiry or until the last
///   success is `staleAfter` old, whichever comes first; the source is down until it answers.
public struct WarningBoard: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        let place: String
        let source: String
    }

    struct Entry: Sendable, Equatable {
        var warnings: [WeatherWarning] = []
        var lastSuccess: Double?
        /// Why the last ask failed; nil after a success.
        var lastError: String?

        /// Whether its list still counts at `now`: answered, and not `staleAfter` ago.
        func isFresh(now: Double, staleAfter: Double) -> Bool {
            lastSuccess.map { now - $0 < staleAfter } ?? false
        }
    }

    private var entries: [Key: Entry] = [:]

    public init() {}

    /// Records one ask of `source` for `place` at `now`.
    public mutating func record(
        place: String, source: String, _ outcome: Result<[WeatherWarning], WeatherFetchError>, at now: Double
    ) {
        let key = Key(place: place, source: source)
        var entry = entries[key] ?? Entry()
        switch outcome {
        case .success(let listed):
            var byID: [String: Int] = [:]
            var warnings: [WeatherWarning] = []
            for warning in listed {
                if let index = byID[warning.id] {
                    warnings[index] = warning  // the later of two messages under one id wins
                } else {
                    byID[warning.id] = warnings.count
                    warnings.append(warning)
                }
            }
            entry = Entry(warnings: warnings, lastSuccess: now)
        case .failure(let error):
            entry.lastError = error.message
        }
        entries[key] = entry
    }

    /// Whether the last ask of `source` for `place` succeeded; nil before the first ask.
    public func isUp(place: String, source: String) -> Bool? {
        entries[Key(place: place, source: source)].map { $0.lastError == nil }
    }

    /// Why the last ask of `source` for `place` failed, and when it last succeeded if its list
    /// still counts at `now`; nil when the last ask succeeded or none was made.
    public func failure(place: String, source: String, now: Double, staleAfter: Double) -> (
        error: String, keptFrom: Double?
    )? {
        guard let entry = entries[Key(place: place, source: source)], let error = entry.lastError else { return nil }
        return (error, entry.isFresh(now: now, staleAfter: staleAfter) ? entry.lastSuccess : nil)
    }

    /// Whether one of `sources` has a list for `place` at `now`: answered once, and not longer
    /// ago than `staleAfter`.
    public func knows(place: String, sources: [String], now: Double, staleAfter: Double) -> Bool {
        sources.contains { entries[Key(place: place, source: $0)]?.isFresh(now: now, staleAfter: staleAfter) == true }
    }

    /// The warnings in force at `place` at `now`, from `sources`, in `listedBefore` order.
    public func inForce(place: String, sources: [String], now: Double, staleAfter: Double) -> [WeatherWarning] {
        sources.compactMap { entries[Key(place: place, source: $0)] }.flatMap { entry -> [WeatherWarning] in
            guard entry.isFresh(now: now, staleAfter: staleAfter) else { return [] }
            return entry.warnings.filter { warning in warning.expires.map { now < $0 } ?? true }
        }.sorted(by: Self.listedBefore)
    }

    /// The order of a place's warnings: most severe first, then by onset, source and id, so a
    /// page is the same for the same state.
    public static func listedBefore(_ a: WeatherWarning, _ b: WeatherWarning) -> Bool {
        if a.severity != b.severity { return a.severity > b.severity }
        return (a.onset ?? 0, a.source, a.id) < (b.onset ?? 0, b.source, b.id)
    }

    /// The next moment after `now` when what is in force changes without an ask: a listed
    /// warning's expiry, or a list going stale. The page must be rendered again then.
    public func nextDeadline(after now: Double, staleAfter: Double) -> Double? {
        entries.values.flatMap { entry -> [Double] in
            guard let lastSuccess = entry.lastSuccess, !entry.warnings.isEmpty, now < lastSuccess + staleAfter else {
                return []
            }
            return entry.warnings.compactMap(\.expires) + [lastSuccess + staleAfter]
        }.filter { $0 > now }.min()
    }

    /// Forgets every place and source not in `kept` (a reload removed the place or the source,
    /// or the place no longer asks it).
    public mutating func keep(only kept: [(place: String, source: String)]) {
        let keys = Set(kept.map { Key(place: $0.place, source: $0.source) })
        entries = entries.filter { keys.contains($0.key) }
    }
}
