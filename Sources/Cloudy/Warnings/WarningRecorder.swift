/// Where one warning source's feed records: the store's `WarningBoard`, under the source's name.
/// The feed hands it each batch's outcomes, renders through it, and arms its stale timer on
/// `nextStaleDeadline()`: the next warning expiry or stale list, when the page must change
/// without an ask.
public struct WarningRecorder: FeedRecorder {
    let store: WeatherStore
    public let source: WarningSourceName

    public init(store: WeatherStore, source: WarningSourceName) {
        self.store = store
        self.source = source
    }

    public func record(_ outcomes: [FeedOutcome<[WeatherWarning]>], at now: Double) {
        store.recordWarnings(source: source, outcomes.map { ($0.place, $0.outcome) }, at: now)
    }

    /// The warning services have no quota: nothing to say on the pages.
    public func setQuietPeriod(_ quietPeriod: QuietPeriod?) {}

    public func render(now: Double) {
        store.render(now: now)
    }

    public func nextStaleDeadline() -> Double? {
        store.nextWarningDeadline()
    }
}

extension WarningSettings {
    /// How the feed of `source` spends: those of `places` that may ask it, every `interval`, at no
    /// quota's cost. Those that ask it (`sources(for:)`), and the `city:` places not located yet
    /// that choose no sources themselves: the feed locates them first, and `CoveredPlaces` asks
    /// for those inside the area only. None while `source` is not configured.
    public func schedule(_ source: WarningSourceName, places: [Place]) -> FeedSchedule {
        guard sources.contains(where: { $0.name == source }) else {
            return FeedSchedule(places: [], interval: interval, callsPerPlace: 0)
        }
        let asking = places.filter { place in
            !place.isLocated && place.warningSources == nil || sources(for: place).contains { $0.name == source }
        }
        return FeedSchedule(places: asking, interval: interval, callsPerPlace: 0)
    }
}
