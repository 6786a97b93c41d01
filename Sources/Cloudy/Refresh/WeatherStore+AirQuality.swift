extension WeatherStore {
    /// Records one air-quality ask's outcomes for `places` as configured (places removed or
    /// changed meanwhile are ignored). Only the places' air-quality status changes: their
    /// weather, its health series and readiness stay as they are.
    public func recordAirQuality(
        _ outcomes: [(place: Place, outcome: Result<AirQualityReport, WeatherFetchError>)], at now: Double
    ) {
        updateStatuses { statuses in
            var byName: [String: Int] = [:]
            for (index, status) in statuses.enumerated() { byName[status.place.name] = index }
            for (place, outcome) in outcomes {
                guard let index = byName[place.name], statuses[index].place == place else { continue }
                statuses[index].airQuality = (statuses[index].airQuality ?? AirQualityStatus()).recording(
                    outcome, at: now)
            }
        }
    }
}
