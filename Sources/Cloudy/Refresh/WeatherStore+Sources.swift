/// The sources whose status each place keeps beside its weather (air quality; a new upstream's
/// field of `PlaceStatus`): recorded, timed out and shown without touching the weather.
extension WeatherStore {
    /// Records one ask's outcomes of such a source for the places as configured (places removed
    /// or changed where they are asked meanwhile are ignored, as for the weather), into each
    /// place's `status`. Only that status changes: the places' weather, its health series and
    /// readiness stay as they are. The location is the weather's business and is not read here.
    func record<Report>(
        _ outcomes: [FeedOutcome<Report>], at now: Double,
        into status: WritableKeyPath<PlaceStatus, SourceStatus<Report>?>
    ) {
        updateStatuses { statuses in
            var byName: [String: Int] = [:]
            for (index, status) in statuses.enumerated() { byName[status.place.name] = index }
            for (place, _, outcome) in outcomes {
                guard let index = byName[place.name], statuses[index].place.isAskedAlike(place) else { continue }
                statuses[index][keyPath: status] = (statuses[index][keyPath: status] ?? SourceStatus()).recording(
                    outcome, at: now)
            }
        }
    }

    /// Records one air-quality ask's outcomes (`record(_:at:into:)`).
    public func recordAirQuality(_ outcomes: [FeedOutcome<AirQualityReport>], at now: Double) {
        record(outcomes, at: now, into: \.airQuality)
    }

    /// The earliest moment a report of `status` on the page goes stale (its last success plus
    /// `refresh.stale_after`), if any.
    func nextStaleDeadline<Report>(of status: KeyPath<PlaceStatus, SourceStatus<Report>?>) -> Double? {
        state.withLockedValue { state in
            let staleAfter = state.config.refresh.staleAfter
            return state.statuses.compactMap {
                $0[keyPath: status]?.report == nil ? nil : $0[keyPath: status]?.lastSuccess
            }
            .map { $0 + staleAfter }.filter { $0 > state.renderedAt }.min()
        }
    }
}

/// Where the feed of a source whose status each place keeps beside its weather (at `status`)
/// records: those statuses in the store, nothing of the weather. Air quality's, and a new
/// upstream's without more to do.
struct StatusRecorder<Report: SourceReport>: FeedRecorder {
    let store: WeatherStore
    let status: WritableKeyPath<PlaceStatus, SourceStatus<Report>?> & Sendable
    /// The source's name while it spends a quota account of its own, whose refusals
    /// `cloudy_exporter_upstream_quota_refused_until_timestamp_seconds` shows under it; nil on
    /// the weather's account, whose places show them.
    var ownAccount: String?

    func record(_ outcomes: [FeedOutcome<Report>], at now: Double) {
        store.record(outcomes, at: now, into: status)
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
        store.nextStaleDeadline(of: status)
    }
}
