/// The official warnings' share of the store: the board of the sources' last lists, written by
/// the warnings' refresh, read by every rendering.
extension WeatherStore {
    /// Records one ask of `source` for each place (`place` as configured; places removed,
    /// changed where they are asked, or given other warning sources meanwhile are ignored).
    public func recordWarnings(
        source: WarningSourceName, _ outcomes: [(Place, Result<[WeatherWarning], WeatherFetchError>)], at now: Double
    ) {
        state.withLockedValue { state in
            var configured: [String: Place] = [:]
            for place in state.config.places { configured[place.name] = place }
            for (place, outcome) in outcomes {
                guard let current = configured[place.name], current.isAskedAlike(place),
                    current.warningSources == place.warningSources
                else { continue }
                state.warnings.record(place: place.name, source: source.rawValue, outcome, at: now)
            }
        }
    }

    /// The next moment the warnings in force change without an ask (an expiry, including those
    /// of alerts inside weather answers, or a list going stale): the page must be rendered then.
    public func nextWarningDeadline() -> Double? {
        state.withLockedValue { state in
            let now = state.renderedAt
            let carried = state.statuses.flatMap { $0.snapshot?.warnings ?? [] }.compactMap(\.expires)
            return
                ([state.warnings.nextDeadline(after: now, staleAfter: state.config.refresh.staleAfter)]
                + carried.filter { $0 > now }.map(Optional.some)).compactMap { $0 }.min()
        }
    }

    /// Every (place, source) pair the config asks, for `WarningBoard.keep(only:)`.
    static func warningAsks(_ statuses: [PlaceStatus], _ settings: WarningSettings) -> [(place: String, source: String)]
    {
        statuses.flatMap { status in
            settings.sources(for: status.locatedPlace).map { (status.place.name, $0.name.rawValue) }
        }
    }
}

extension PlaceStatus {
    /// The place with the coordinates it was last fetched at (a `city:` place's found ones),
    /// keeping its configured settings.
    public var locatedPlace: Place {
        guard var located = location else { return place }
        located.warningSources = place.warningSources
        return located
    }
}
