import NIOConcurrencyHelpers
import NIOCore

/// The exporter's state between refreshes: every place's status, and the pages rendered from
/// them. The refresh writes it; scrapes only read the rendered bytes, under a lock held for
/// the time it takes to copy a reference.
public final class WeatherStore: Sendable {
    public struct Rendered: Sendable {
        public var metrics: RenderedMetrics
        public var landingPage: ByteBuffer
        /// Why `/readyz` says 503, or nil when ready.
        public var notReadyReason: String?
        /// "Place: why its last refresh failed", one per failing place, for `/readyz`.
        public var placeProblems: [String] = []
    }

    struct State {
        var config: Config
        var statuses: [PlaceStatus]
        var rendered: Rendered
        var renderedAt: Double
    }

    public let telemetry: ExporterTelemetry
    public let telemetryPath: String
    private let state: NIOLockedValueBox<State>

    public init(config: Config, telemetry: ExporterTelemetry, telemetryPath: String, now: Double) {
        self.telemetry = telemetry
        self.telemetryPath = telemetryPath
        let statuses = config.places.map { PlaceStatus(place: $0) }
        let rendered = Self.render(config: config, statuses: statuses, telemetry: telemetry, telemetryPath: telemetryPath, now: now)
        state = NIOLockedValueBox(State(config: config, statuses: statuses, rendered: rendered, renderedAt: now))
    }

    public var rendered: Rendered { state.withLockedValue { $0.rendered } }
    public var config: Config { state.withLockedValue { $0.config } }
    public var statuses: [PlaceStatus] { state.withLockedValue { $0.statuses } }

    /// Records one refresh's outcomes: `place` as configured (places removed or changed meanwhile
    /// are ignored), `location` as fetched (with the coordinates a geocoder found), if it was.
    public func record(_ outcomes: [(place: Place, location: Place?, outcome: Result<WeatherSnapshot, WeatherFetchError>)], at now: Double) {
        state.withLockedValue { state in
            var byName: [String: Int] = [:]
            for (index, status) in state.statuses.enumerated() { byName[status.place.name] = index }
            for (place, location, outcome) in outcomes {
                guard let index = byName[place.name], state.statuses[index].place == place else { continue }
                if let location { state.statuses[index].location = location }
                state.statuses[index].lastAttempt = now
                switch outcome {
                case let .success(snapshot):
                    state.statuses[index].snapshot = snapshot
                    state.statuses[index].lastSuccess = now
                    state.statuses[index].lastError = nil
                case let .failure(error):
                    state.statuses[index].lastError = error.message
                }
            }
        }
    }

    /// Switches to a new config: places that stay (same name and settings) keep their weather,
    /// removed ones vanish, added ones wait for their first refresh.
    public func replaceConfig(_ config: Config) {
        state.withLockedValue { state in
            var previous: [String: PlaceStatus] = [:]
            for status in state.statuses { previous[status.place.name] = status }
            state.config = config
            state.statuses = config.places.map { place in
                if var kept = previous[place.name], kept.place.latitude == place.latitude, kept.place.longitude == place.longitude,
                   kept.place.city == place.city, kept.place.timezone == place.timezone {
                    kept.place = place
                    return kept
                }
                return PlaceStatus(place: place)
            }
        }
    }

    /// The earliest moment a place whose weather is on the page goes stale (its last success
    /// plus `stale_after`), if any.
    public func nextStaleDeadline() -> Double? {
        state.withLockedValue { state in
            let staleAfter = state.config.refresh.staleAfter
            return state.statuses.filter { $0.snapshot != nil }.compactMap { $0.lastSuccess.map { $0 + staleAfter } }
                .filter { $0 > state.renderedAt }.min()
        }
    }

    /// Renders `/metrics`, `/` and readiness from the current state. Called after every refresh
    /// and reload, never per scrape.
    public func render(now: Double) {
        let (config, statuses) = state.withLockedValue { ($0.config, $0.statuses) }
        let rendered = Self.render(config: config, statuses: statuses, telemetry: telemetry, telemetryPath: telemetryPath, now: now)
        state.withLockedValue {
            $0.rendered = rendered
            $0.renderedAt = now
        }
    }

    static func render(config: Config, statuses: [PlaceStatus], telemetry: ExporterTelemetry, telemetryPath: String, now: Double) -> Rendered {
        var page = MetricsPage()
        for status in statuses {
            MetricsViewModel(status: status, units: status.place.units, provider: config.provider.name,
                             now: now, staleAfter: config.refresh.staleAfter).addSamples(to: &page)
        }
        telemetry.addSamples(to: &page, refreshInterval: config.refresh.interval)
        let reason = notReadyReason(statuses)
        let views = statuses.map { StatusViewModel(status: $0, units: $0.place.units, now: now, staleAfter: config.refresh.staleAfter) }
        let landing = ByteBufferAllocator().buffer(bytes: LandingPage.render(places: views, telemetryPath: telemetryPath, ready: reason))
        let problems = statuses.compactMap { status in status.lastError.map { "\(status.place.name): \($0)" } }
        return Rendered(metrics: RenderedMetrics(page: page), landingPage: landing, notReadyReason: reason, placeProblems: problems)
    }

    /// Ready once every place has had a first attempt and at least one place succeeded.
    /// A shard that owns no place has nothing to wait for and is ready at once.
    static func notReadyReason(_ statuses: [PlaceStatus]) -> String? {
        if statuses.isEmpty { return nil }
        let waiting = statuses.filter { $0.lastAttempt == nil }.count
        if waiting > 0 {
            return "waiting for the first refresh of \(waiting) of \(statuses.count) places"
        }
        if !statuses.contains(where: { $0.lastSuccess != nil }) {
            let reason = statuses.first?.lastError ?? "unknown error"
            return "no place has been refreshed successfully yet: \(reason)"
        }
        return nil
    }
}
