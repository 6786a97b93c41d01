import NIOConcurrencyHelpers

/// The exporter's state between refreshes: the config in force, every place's status, and the
/// pages last rendered from them (`RenderedPages`). The refresh writes it; scrapes only read the
/// rendered pages, under a lock held for the time it takes to copy a reference.
public final class WeatherStore: Sendable {
    struct State {
        var config: Config
        var statuses: [PlaceStatus]
        var rendered: RenderedPages
        var renderedAt: Double
        /// Set on every status, and on statuses a reload adds.
        var quietPeriod: QuietPeriod?
        /// The warning sources' last lists (`WeatherStore+Warnings`).
        var warnings = WarningBoard()
        /// Numbers the renders in the order they read the state and the telemetry (`render`).
        var renderTickets = 0
        /// The latest time a render was asked for: no render shows an earlier one.
        var latestRenderTime: Double
        /// The ticket of the render `rendered` came from.
        var renderedTicket = 0
        /// Whether a rendering has said "ready" since the start (`Readiness`).
        var wasReady = false
    }

    public let telemetry: ExporterTelemetry
    public let telemetryPath: String
    private let processMetrics: @Sendable () -> MetricFamilies
    let state: NIOLockedValueBox<State>
    /// Runs in `render` between building the pages and publishing them: lets a test interleave
    /// two renders deterministically. Nil in production.
    let beforePublishing = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    /// `processMetrics` reads the live `process_*` families at scrape time: /proc by default.
    public init(
        config: Config, telemetry: ExporterTelemetry, telemetryPath: String, now: Double,
        processMetrics: @escaping @Sendable () -> MetricFamilies
    ) {
        self.telemetry = telemetry
        self.telemetryPath = telemetryPath
        self.processMetrics = processMetrics
        let statuses = config.places.map { PlaceStatus(place: $0) }
        let rendered = RenderedPages(
            config: config, statuses: statuses, telemetry: telemetry.read(),
            telemetryPath: telemetryPath, now: now, processMetrics: processMetrics)
        state = NIOLockedValueBox(
            State(
                config: config, statuses: statuses, rendered: rendered, renderedAt: now, latestRenderTime: now,
                wasReady: rendered.readiness.notReadyReason == nil))
    }

    public var rendered: RenderedPages { state.withLockedValue { $0.rendered } }
    public var config: Config { state.withLockedValue { $0.config } }
    public var statuses: [PlaceStatus] { state.withLockedValue { $0.statuses } }

    /// Records one refresh's outcomes: `place` as configured (places removed meanwhile, or changed
    /// where they are asked, are ignored: `Place.isAskedAlike`), `location` as fetched (with the
    /// coordinates a geocoder found), if it was.
    public func record(
        _ outcomes: [(place: Place, location: Place?, outcome: Result<WeatherSnapshot, WeatherFetchError>)],
        at now: Double
    ) {
        state.withLockedValue { state in
            var byName: [String: Int] = [:]
            for (index, status) in state.statuses.enumerated() { byName[status.place.name] = index }
            for (place, location, outcome) in outcomes {
                guard let index = byName[place.name], state.statuses[index].place.isAskedAlike(place) else { continue }
                if let location { state.statuses[index].location = location }
                state.statuses[index].lastAttempt = now
                switch outcome {
                case .success(let snapshot):
                    state.statuses[index].snapshot = snapshot.oneStepPerLabel().physicallyPossible()
                    state.statuses[index].lastSuccess = now
                    state.statuses[index].lastError = nil
                case .failure(let error):
                    state.statuses[index].lastError = error.message
                }
            }
        }
    }

    /// Changes the statuses through `change` (`WeatherStore+Sources.swift`).
    func updateStatuses(_ change: (inout [PlaceStatus]) -> Void) {
        state.withLockedValue { state in
            change(&state.statuses)
        }
    }

    /// Switches to a new config: places that stay (asked alike: `Place.isAskedAlike`) keep their
    /// weather and take their new units and thresholds, removed ones vanish, added or moved ones
    /// wait for their first refresh. Their air quality keeps only what the new `air_quality:`
    /// gives (`AirQualityReport.given(by:)`).
    public func replaceConfig(_ config: Config) {
        state.withLockedValue { state in
            var previous: [String: PlaceStatus] = [:]
            for status in state.statuses { previous[status.place.name] = status }
            state.config = config
            state.statuses = config.places.map { place in
                if var kept = previous[place.name], kept.place.isAskedAlike(place) {
                    kept.place = place
                    if let settings = config.airQuality, let report = kept.airQuality?.report {
                        kept.airQuality?.report = report.given(by: settings)
                    }
                    return kept
                }
                var added = PlaceStatus(place: place)
                added.quietPeriod = state.quietPeriod
                return added
            }
            state.warnings.keep(only: Self.warningAsks(state.statuses, config.warnings))
        }
    }

    /// Puts every place under the provider's quiet period, or (nil) lifts it.
    public func setQuietPeriod(_ quietPeriod: QuietPeriod?) {
        state.withLockedValue { state in
            state.quietPeriod = quietPeriod
            for index in state.statuses.indices { state.statuses[index].quietPeriod = quietPeriod }
        }
    }

    /// Tells every place when the paced refresh's next batch goes, or (nil) that none waits.
    public func setPacedUntil(_ until: Double?) {
        state.withLockedValue { state in
            for index in state.statuses.indices { state.statuses[index].pacedUntil = until }
        }
    }

    /// The earliest moment the weather's page changes without an answer, if any: a place whose
    /// weather is on the page goes stale (its last success plus `stale_after`), or an alert the
    /// weather answer carried (One Call, Dark Sky) expires.
    public func nextStaleDeadline() -> Double? {
        state.withLockedValue { state in
            let staleAfter = state.config.refresh.staleAfter
            let stale = state.statuses.filter { $0.snapshot != nil }.compactMap {
                $0.lastSuccess.map { $0 + staleAfter }
            }
            let expiries = state.statuses.flatMap { $0.snapshot?.warnings ?? [] }.compactMap(\.expires)
            return (stale + expiries).filter { $0 > state.renderedAt }.min()
        }
    }

    /// Renders the pages from the current state. Called after every refresh and reload, and
    /// when a place's weather goes stale; never per scrape. Renders run on each feed's queue and
    /// on the reload's thread, so several can overlap. Each reads the state and the telemetry
    /// together, under the store's lock, and takes a ticket there; its pages are published only
    /// if no render with a later ticket has been published. So the page never goes back: not to
    /// older weather, not to a counter's older value (which Prometheus would take for a reset),
    /// not to a reload's earlier outcome. Nor to an earlier time: a render asked for with a time
    /// before the latest one asked for (a reload takes its time before it reads the config)
    /// renders at that latest time, or series gone stale would come back.
    public func render(now: Double) {
        let (config, statuses, warnings, reading, now, ticket, wasReady) = state.withLockedValue { state in
            state.renderTickets += 1
            state.latestRenderTime = max(state.latestRenderTime, now)
            return (
                state.config, state.statuses, state.warnings, telemetry.read(), state.latestRenderTime,
                state.renderTickets, state.wasReady
            )
        }
        let rendered = RenderedPages(
            config: config, statuses: statuses, warnings: warnings, telemetry: reading,
            telemetryPath: telemetryPath, now: now, wasReady: wasReady, processMetrics: processMetrics)
        beforePublishing.withLockedValue { $0 }?()
        state.withLockedValue { state in
            guard ticket > state.renderedTicket else { return }
            state.rendered = rendered
            state.renderedAt = now
            state.renderedTicket = ticket
            if rendered.readiness.notReadyReason == nil { state.wasReady = true }
        }
    }
}

/// The weather feed records into the store; the rest of `FeedRecorder` is the store's own.
extension WeatherStore: FeedRecorder {
    public func recordRefresh(seconds: Double) {
        telemetry.recordRefresh(seconds: seconds)
    }
}
