import NIOCore

/// Every page the server hands out, rendered from the store's state after each refresh and
/// reload (never per request): `/metrics` in both formats, the HTML pages (`/` and each place's),
/// and what `/readyz` says. A class: every request takes the store's current rendering, and a
/// reference is one retain where a copy of the three views was several.
public final class RenderedPages: Sendable {
    public let metrics: RenderedMetrics
    public let html: HTMLPages
    public let readiness: Readiness

    /// `processMetrics` is the live `process_*` part, read at scrape time (at most once a second);
    /// `wasReady` whether the exporter has been ready since it started (`Readiness`).
    public init(
        config: Config, statuses: [PlaceStatus], warnings board: WarningBoard = WarningBoard(),
        telemetry: ExporterTelemetry.Reading, telemetryPath: String, now: Double, wasReady: Bool = false,
        processMetrics: @escaping @Sendable () -> MetricFamilies
    ) {
        var page = MetricFamilies()
        var warnings: [PlaceWarnings] = []
        let lacking = Set(WeatherAlert.allCases.filter(config.cannotFeed))
        for status in statuses {
            MetricsViewModel(
                status: status, units: status.place.units, provider: config.provider.name,
                now: now, staleAfter: config.refresh.staleAfter, lacking: lacking
            ).addSamples(to: &page)
            if config.airQuality != nil {
                AirQualityMetricsViewModel(
                    place: status.place, status: status.airQuality ?? AirQualityStatus(), now: now,
                    staleAfter: config.refresh.staleAfter
                ).addSamples(to: &page)
            }
            let placeWarnings = PlaceWarnings(
                status: status, settings: config.warnings, provider: config.provider.name, board: board, now: now,
                staleAfter: config.refresh.staleAfter)
            WarningFamilies.addSamples(placeWarnings, board: board, to: &page)
            warnings.append(placeWarnings)
        }
        telemetry.addSamples(
            to: &page, refreshInterval: config.refresh.interval, shard: config.shard,
            quietPeriod: statuses.lazy.compactMap(\.quietPeriod).first)
        readiness = Readiness(statuses, wasReady: wasReady)
        html = HTMLPages(
            config: config, statuses: statuses, warnings: warnings, readiness: readiness,
            telemetryPath: telemetryPath, now: now)
        metrics = RenderedMetrics(page: page, processMetrics: processMetrics)
    }
}
