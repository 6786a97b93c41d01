import Logging

/// One ask of a warning source for every place it covers, recorded into the store, and the page
/// rendered from it. No timer and no back-off of its own: the scheduler that drives the weather
/// calls `run` on `warnings.interval` for each source, and reads the failures it returns for its
/// back-off and `Retry-After`. Blocks the calling (Dispatch) thread for the asks.
public struct WarningsRefresh: Sendable {
    let store: WeatherStore
    let logger: Logger
    let clock: ExporterClock

    public init(store: WeatherStore, logger: Logger, clock: ExporterClock) {
        self.store = store
        self.logger = logger
        self.clock = clock
    }

    /// Asks `source` for the places in its area (or that name it); returns the failures, one per
    /// place that failed. Places outside its area are not asked, and nothing is sent when none is.
    @discardableResult
    public func run(_ source: WarningSource) -> [WeatherFetchError] {
        let places = store.warningPlaces(for: source.name)
        guard !places.isEmpty else { return [] }
        let outcomes = source.fetch(places, logger: logger)
        store.recordWarnings(source: source.name, Array(zip(places, outcomes)), at: clock.now())
        store.render(now: clock.now())
        let failures = outcomes.compactMap { outcome -> WeatherFetchError? in
            if case .failure(let error) = outcome { return error }
            return nil
        }
        if let first = failures.first {
            logger.warning(
                "warning source failed",
                metadata: [
                    "source": "\(source.name.rawValue)", "failed": "\(failures.count)", "places": "\(places.count)",
                    "error": "\(first.message)",
                ])
        }
        return failures
    }

    /// Renders the page at the next warning deadline's moment: the scheduler's stale timer arms
    /// on `store.nextWarningDeadline()` and calls this when it fires.
    public func expire() {
        store.render(now: clock.now())
    }
}
