import NIOConcurrencyHelpers

/// The exporter's own health: upstream outcomes, refresh durations, config reloads. Written
/// from the refresh queue and the reload path, read when the page is rendered.
public final class ExporterTelemetry: UpstreamRecording, Sendable {
    public static let refreshBuckets: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    struct State {
        var upstream: [String: [String: Int]] = [:]  // provider → code → count
        var bucketCounts = [Int](repeating: 0, count: ExporterTelemetry.refreshBuckets.count)
        var refreshCount = 0
        var refreshSum = 0.0
        var reloadSuccessful = true
        var reloadSuccessTimestamp: Double
    }

    private let state: NIOLockedValueBox<State>

    public init(startedAt: Double) {
        state = NIOLockedValueBox(State(reloadSuccessTimestamp: startedAt))
    }

    public func recordUpstream(provider: String, code: String) {
        state.withLockedValue { $0.upstream[provider, default: [:]][code, default: 0] += 1 }
    }

    public func upstreamCount(provider: ProviderName, code: String) -> Int {
        state.withLockedValue { $0.upstream[provider.rawValue]?[code] ?? 0 }
    }

    public func recordRefresh(seconds: Double) {
        state.withLockedValue { state in
            state.refreshCount += 1
            state.refreshSum += seconds
            for (index, bound) in Self.refreshBuckets.enumerated() where seconds <= bound {
                state.bucketCounts[index] += 1
            }
        }
    }

    public func recordReload(successful: Bool, at time: Double) {
        state.withLockedValue { state in
            state.reloadSuccessful = successful
            if successful { state.reloadSuccessTimestamp = time }
        }
    }

    public static let buildInfo = MetricDescriptor(
        "cloudy_exporter_build_info", .gauge, "Version, revision and Swift version of cloudy_exporter; always 1.")
    public static let interval = MetricDescriptor(
        "cloudy_exporter_refresh_interval_seconds", .gauge,
        "Seconds between weather refreshes in force (refresh.interval after any fair-use clamp).")
    public static let duration = MetricDescriptor(
        "cloudy_exporter_refresh_duration_seconds", .histogram, "Seconds a refresh of all places took.")
    public static let upstream = MetricDescriptor(
        "cloudy_exporter_upstream_requests", .counter,
        "Requests to the weather API by provider and outcome: HTTP status code or error kind.")
    public static let reloadOK = MetricDescriptor(
        "cloudy_exporter_config_last_reload_successful", .gauge, "1 when the last config reload succeeded, else 0.")
    public static let reloadTime = MetricDescriptor(
        "cloudy_exporter_config_last_reload_success_timestamp_seconds", .gauge,
        "Unix time of the last successful config load.")
    public static let shardInfo = MetricDescriptor(
        "cloudy_exporter_shard_info", .gauge,
        "The shard this replica serves (--shard or shard:) and how many shards it believes exist; always 1.")

    public func addSamples(to page: inout MetricFamilies, refreshInterval: Double, shard: Shard) {
        let state = state.withLockedValue { $0 }
        page.add(
            Self.buildInfo,
            labels: [
                ("version", BuildInfo.version), ("revision", BuildInfo.revision),
                ("swift_version", BuildInfo.swiftVersion),
            ], value: 1)
        page.add(Self.interval, value: refreshInterval)
        for (index, bound) in Self.refreshBuckets.enumerated() {
            page.add(
                Self.duration, labels: [("le", SampleValue.format(bound))], value: Double(state.bucketCounts[index]),
                suffix: "_bucket")
        }
        page.add(Self.duration, labels: [("le", "+Inf")], value: Double(state.refreshCount), suffix: "_bucket")
        page.add(Self.duration, value: state.refreshSum, suffix: "_sum")
        page.add(Self.duration, value: Double(state.refreshCount), suffix: "_count")
        page.declare(Self.upstream)
        for provider in state.upstream.keys.sorted() {
            for (code, count) in state.upstream[provider]!.sorted(by: { $0.key < $1.key }) {
                page.add(
                    Self.upstream, labels: [("provider", provider), ("code", code)], value: Double(count),
                    suffix: "_total")
            }
        }
        page.add(Self.reloadOK, value: state.reloadSuccessful ? 1 : 0)
        page.add(Self.reloadTime, value: state.reloadSuccessTimestamp)
        page.add(
            Self.shardInfo, labels: [("shard_index", String(shard.index)), ("shard_count", String(shard.count))],
            value: 1)
    }
}
