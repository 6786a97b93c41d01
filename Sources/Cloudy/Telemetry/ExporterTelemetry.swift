import NIOConcurrencyHelpers

/// The exporter's own health: upstream outcomes, refresh durations, config reloads. Written
/// from the refresh queue and the reload path, read when the page is rendered.
public final class ExporterTelemetry: UpstreamRecording, Sendable {
    public static let refreshBuckets: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// The telemetry at one moment (`read()`): what a rendering shows.
    public struct Reading: Sendable {
        var upstream: [String: [String: Int]] = [:]  // provider → code → count
        var bucketCounts = [Int](repeating: 0, count: ExporterTelemetry.refreshBuckets.count)
        var refreshCount = 0
        var refreshSum = 0.0
        var reloadSuccessful = true
        var reloadSuccessTimestamp: Double
        // Issue 16's quota families:
        var calls: [String: Double] = [:]  // provider → calls as it counts them
        var plan: RefreshPlan?
        /// The plans of the accounts beside the weather provider's (an air-quality source on a
        /// quota of its own, `RefreshPlan.airQualityOnItsOwn`).
        var plansBeside: [RefreshPlan] = []
        /// Quota refusals in force on accounts beside the weather provider's (an air-quality
        /// source on a quota of its own): source → until when (unix seconds).
        var refusedUntil: [String: Double] = [:]
    }

    private let state: NIOLockedValueBox<Reading>

    public init(startedAt: Double) {
        state = NIOLockedValueBox(Reading(reloadSuccessTimestamp: startedAt))
    }

    public func recordUpstream(provider: String, code: String) {
        state.withLockedValue { $0.upstream[provider, default: [:]][code, default: 0] += 1 }
    }

    public func upstreamCount(provider: ProviderName, code: String) -> Int {
        upstreamCodes(provider: provider.rawValue)[code] ?? 0
    }

    /// The requests counted under `provider` (a provider's, a source's or `geocoding`), by code.
    public func upstreamCodes(provider: String) -> [String: Int] {
        state.withLockedValue { $0.upstream[provider] ?? [:] }
    }

    // MARK: Calls against the provider's quota

    public func recordCalls(provider: String, calls: Double) {
        state.withLockedValue { $0.calls[provider, default: 0] += calls }
    }

    public func callCount(provider: ProviderName) -> Double {
        state.withLockedValue { $0.calls[provider.rawValue] ?? 0 }
    }

    /// A quota refusal on the account of `source` (not the weather provider's, whose refusal the
    /// places carry) until `until`, or (nil) none any more.
    public func recordQuotaRefusal(source: String, until: Double?) {
        state.withLockedValue { $0.refusedUntil[source] = until }
    }

    /// The plan in force (set at start and on every reload that is accepted), and those of the
    /// accounts beside it.
    public func recordPlan(_ plan: RefreshPlan, beside: [RefreshPlan] = []) {
        state.withLockedValue {
            $0.plan = plan
            $0.plansBeside = beside
        }
    }

    /// The plans of `config` (after `FairUse.clampInterval`): the weather provider's, and an
    /// air-quality source's on a quota of its own, whose quota families are labelled by its name.
    public func recordPlans(of config: Config) {
        recordPlan(RefreshPlan(config), beside: RefreshPlan.airQualityOnItsOwn(config).map { [$0] } ?? [])
    }

    public static let upstreamCalls = MetricDescriptor(
        "cloudy_exporter_upstream_calls", .counter,
        "Calls against each provider's quota as it counts them (fractional for Open-Meteo; its air quality included).")
    public static let quotaCalls = MetricDescriptor(
        "cloudy_exporter_upstream_quota_calls", .gauge,
        "Calls the quota in force allows per window (this replica's share when shards share one).")
    public static let plannedCalls = MetricDescriptor(
        "cloudy_exporter_upstream_planned_calls", .gauge,
        "Calls the current schedule spends per window, as planned before they are sent.")
    public static let quotaRefusedUntil = MetricDescriptor(
        "cloudy_exporter_upstream_quota_refused_until_timestamp_seconds", .gauge,
        "While the provider refuses requests for its quota: when Cloudy asks it again (unix seconds).")

    fileprivate static func addQuotaSamples(_ reading: Reading, to page: inout MetricFamilies) {
        var calls = reading.calls
        let plans = (reading.plan.map { [$0] } ?? []) + reading.plansBeside
        // Each plan's calls are shown from the start, 0 before the first call.
        for plan in plans { calls[plan.providerLabel, default: 0] += 0 }
        page.declare(upstreamCalls)
        for (provider, calls) in calls.sorted(by: { $0.key < $1.key }) {
            page.add(upstreamCalls, labels: [("provider", provider)], value: CallCost.rounded(calls), suffix: "_total")
        }
        for plan in plans {
            let provider = plan.providerLabel
            for window in QuotaWindow.allCases {
                if let limit = plan.budget.quota.limits[window] {
                    page.add(quotaCalls, labels: [("provider", provider), ("window", window.rawValue)], value: limit)
                }
                page.add(
                    plannedCalls, labels: [("provider", provider), ("window", window.rawValue)],
                    value: plan.planned(window))
            }
        }
    }

    // MARK: Refreshes and reloads

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
        "Seconds between weather refreshes in force (refresh.interval after the fair-use floor and the quota plan).")
    public static let duration = MetricDescriptor(
        "cloudy_exporter_refresh_duration_seconds", .histogram, "Seconds a refresh of all places took.")
    public static let upstream = MetricDescriptor(
        "cloudy_exporter_upstream_requests", .counter,
        "Requests to each upstream (provider: weather, geocoding, air quality, warnings) by outcome: HTTP status or error kind."
    )
    public static let reloadOK = MetricDescriptor(
        "cloudy_exporter_config_last_reload_successful", .gauge, "1 when the last config reload succeeded, else 0.")
    public static let reloadTime = MetricDescriptor(
        "cloudy_exporter_config_last_reload_success_timestamp_seconds", .gauge,
        "Unix time of the last successful config load.")
    public static let shardInfo = MetricDescriptor(
        "cloudy_exporter_shard_info", .gauge,
        "The shard this replica serves (--shard or shard:) and how many shards it believes exist; always 1.")

    /// The telemetry now; a rendering reads it under the store's lock (`WeatherStore.render`).
    public func read() -> Reading { state.withLockedValue { $0 } }
}

extension ExporterTelemetry.Reading {
    /// The exporter's own families as of this reading; `quietPeriod` is the provider's quota
    /// refusal the places show, if any (other sources' refusals are in the reading).
    public func addSamples(
        to page: inout MetricFamilies, refreshInterval: Double, shard: Shard, quietPeriod: QuietPeriod? = nil
    ) {
        page.add(
            ExporterTelemetry.buildInfo,
            labels: [
                ("version", BuildInfo.version), ("revision", BuildInfo.revision),
                ("swift_version", BuildInfo.swiftVersion),
            ], value: 1)
        page.add(ExporterTelemetry.interval, value: refreshInterval)
        for (index, bound) in ExporterTelemetry.refreshBuckets.enumerated() {
            page.add(
                ExporterTelemetry.duration, labels: [("le", SampleValue.format(bound))],
                value: Double(bucketCounts[index]),
                suffix: "_bucket")
        }
        page.add(ExporterTelemetry.duration, labels: [("le", "+Inf")], value: Double(refreshCount), suffix: "_bucket")
        page.add(ExporterTelemetry.duration, value: refreshSum, suffix: "_sum")
        page.add(ExporterTelemetry.duration, value: Double(refreshCount), suffix: "_count")
        page.declare(ExporterTelemetry.upstream)
        for provider in upstream.keys.sorted() {
            for (code, count) in upstream[provider]!.sorted(by: { $0.key < $1.key }) {
                page.add(
                    ExporterTelemetry.upstream, labels: [("provider", provider), ("code", code)], value: Double(count),
                    suffix: "_total")
            }
        }
        page.add(ExporterTelemetry.reloadOK, value: reloadSuccessful ? 1 : 0)
        page.add(ExporterTelemetry.reloadTime, value: reloadSuccessTimestamp)
        page.add(
            ExporterTelemetry.shardInfo,
            labels: [("shard_index", String(shard.index)), ("shard_count", String(shard.count))],
            value: 1)
        ExporterTelemetry.addQuotaSamples(self, to: &page)
        var refusedUntil = self.refusedUntil
        if let quietPeriod { refusedUntil[quietPeriod.provider.rawValue] = quietPeriod.until }
        for (provider, until) in refusedUntil.sorted(by: { $0.key < $1.key }) {
            page.add(ExporterTelemetry.quotaRefusedUntil, labels: [("provider", provider)], value: until)
        }
    }
}
