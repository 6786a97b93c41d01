extension WeatherStore {
    /// Records one air-quality ask's outcomes for `places` as configured (places removed or
    /// changed where they are asked meanwhile are ignored, as for the weather), in the
    /// scheduler's `FeedOutcome` shape (the location is the weather's business and is not read
    /// here). Only the places' air-quality status changes: their weather, its health series and
    /// readiness stay as they are.
    public func recordAirQuality(
        _ outcomes: [(place: Place, location: Place?, outcome: Result<AirQualityReport, WeatherFetchError>)],
        at now: Double
    ) {
        updateStatuses { statuses in
            var byName: [String: Int] = [:]
            for (index, status) in statuses.enumerated() { byName[status.place.name] = index }
            for (place, _, outcome) in outcomes {
                guard let index = byName[place.name], statuses[index].place.isAskedAlike(place) else { continue }
                statuses[index].airQuality = (statuses[index].airQuality ?? AirQualityStatus()).recording(
                    outcome, at: now)
            }
        }
    }
}

extension WeatherStore {
    /// The earliest moment a place's air quality on the page goes stale (its last success plus
    /// `refresh.stale_after`), if any.
    func nextAirQualityStaleDeadline() -> Double? {
        state.withLockedValue { state in
            let staleAfter = state.config.refresh.staleAfter
            return state.statuses.compactMap { $0.airQuality?.report == nil ? nil : $0.airQuality?.lastSuccess }
                .map { $0 + staleAfter }.filter { $0 > state.renderedAt }.min()
        }
    }
}

/// Where the air-quality feed's outcomes go: the places' air-quality statuses in the store,
/// nothing of their weather.
struct AirQualityRecorder: FeedRecorder {
    let store: WeatherStore
    /// The source's name while it spends a quota account of its own, whose refusals
    /// `cloudy_exporter_upstream_quota_refused_until_timestamp_seconds` shows under it; nil on
    /// the weather's account, whose places show them.
    let ownAccount: String?

    func record(_ outcomes: [FeedOutcome<AirQualityReport>], at now: Double) {
        store.recordAirQuality(outcomes, at: now)
    }

    /// A place waiting for a quiet period records that as its failure, and on the weather's
    /// account the weather's places show the period already; on its own, the telemetry says it.
    func setQuietPeriod(_ quietPeriod: QuietPeriod?) {
        guard let ownAccount else { return }
        store.telemetry.recordQuotaRefusal(source: ownAccount, until: quietPeriod?.until)
    }

    func render(now: Double) {
        store.render(now: now)
    }

    func nextStaleDeadline() -> Double? {
        store.nextAirQualityStaleDeadline()
    }
}
