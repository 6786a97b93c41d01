extension WeatherStore {
    /// Records one air-quality ask's outcomes for `places` as configured (places removed or
    /// changed meanwhile are ignored), in the scheduler's `FeedOutcome` shape (the location is
    /// the weather's business and is not read here). Only the places' air-quality status
    /// changes: their weather, its health series and readiness stay as they are.
    public func recordAirQuality(
        _ outcomes: [(place: Place, location: Place?, outcome: Result<AirQualityReport, WeatherFetchError>)],
        at now: Double
    ) {
        updateStatuses { statuses in
            var byName: [String: Int] = [:]
            for (index, status) in statuses.enumerated() { byName[status.place.name] = index }
            for (place, _, outcome) in outcomes {
                guard let index = byName[place.name], statuses[index].place == place else { continue }
                statuses[index].airQuality = (statuses[index].airQuality ?? AirQualityStatus()).recording(
                    outcome, at: now)
            }
        }
    }
}
