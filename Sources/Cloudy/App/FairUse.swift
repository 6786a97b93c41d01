import Logging

/// The public hosts' fair-use floors for the refresh interval.
public enum FairUse {
    /// How much sooner than a per-place spacing (OpenWeatherMap's ten minutes, MetAlerts' ten
    /// minutes) a place is asked again: a refresh due when the spacing ends starts on a timer, a
    /// few milliseconds either way of the last one's moment, and must ask, not keep the last
    /// answer for another whole interval.
    static let spacingTolerance = 2.0

    public static func minimumInterval(_ provider: ProviderSettings) -> Double? {
        switch provider.name {
        case .openMeteo where provider.isPublicHost:
            return 60  // current conditions change every 15 minutes; 10 000 calls a day are free
        case .openWeatherMap:
            // One call per place per ten minutes whatever the host: OpenWeatherMap updates no
            // faster and bills or throttles every call (the provider also enforces this per place).
            return OpenWeatherMapProvider.minimumCallSpacing
        case .metNorway where provider.isPublicHost:
            return 600  // MET Norway asks clients to honour Expires (about 30 minutes)
        case .darkSky where provider.isPublicHost:
            // Pirate Weather caches a forecast 15 minutes and its maintainer spoke of 60 requests
            // a minute: with a paid plan's quota (or `quota:` unlimited) no faster than a minute.
            return 60
        default:
            return nil
        }
    }

    /// The interval in use, decided in one place at start and on every reload: first raised to
    /// the public host's fair-use floor, then fitted to the quota in force (`RefreshPlan`)
    /// as `refresh.over_quota` says — stretched to the shortest interval that fits, kept with a
    /// warning, or refused with a `ConfigError` (`file` names the config in it).
    ///
    /// Against a provider's public host, the interval is raised to its fair-use minimum (and
    /// logged); any other URL (a self-hosted server, a test fake) gets the interval as written —
    /// except OpenWeatherMap, whose ten-minute call budget holds everywhere. Then an air-quality
    /// source on a quota of its own is fitted to that quota (`fitAirQualityQuota`). Last,
    /// `refresh.stale_after` is raised to outlast the intervals in use
    /// (`keepStaleAfterPastInterval`); an air-quality source on a quota of its own that still
    /// cannot refresh within it is logged.
    public static func clampInterval(_ config: Config, file: String?, logger: Logger) throws(ConfigError) -> Config {
        var clamped = config
        if let minimum = minimumInterval(config.provider),
            config.refresh.interval < minimum
        {
            clamped.refresh.interval = minimum
            logger.warning(
                "refresh.interval raised to the provider's fair-use minimum",
                metadata: [
                    "configured": "\(PrometheusDuration.format(config.refresh.interval))",
                    "used": "\(PrometheusDuration.format(minimum))",
                    "provider": "\(config.provider.name.rawValue)",
                ])
        }
        let fitted = try fitQuota(clampWarningsInterval(clamped, logger: logger), file: file, logger: logger)
        let kept = keepStaleAfterPastInterval(
            try fitAirQualityQuota(fitted, file: file, logger: logger), logger: logger)
        if let plan = RefreshPlan.airQualityOnItsOwn(kept),
            let warning = plan.staleBetweenRefreshes(staleAfter: kept.refresh.staleAfter)
        {
            logger.warning("\(warning)", metadata: ["plan": "\(plan.summary)"])
        }
        return kept
    }

    /// Applies `refresh.over_quota` when the plan does not fit the quota in force. A window too
    /// small for one place's request fits at no interval: `refuse` makes it a config error, the
    /// others log it (and `stretch` still spreads the refreshes as the other windows need).
    public static func fitQuota(_ config: Config, file: String?, logger: Logger) throws(ConfigError) -> Config {
        let plan = RefreshPlan(config)
        if plan.windowBelowOnePlace != nil {
            guard config.refresh.overQuota != .refuse else {
                throw ConfigError(
                    file: file, field: "provider.quota",
                    reason: "\(plan.summary) (refresh.over_quota: refuse; see docs/providers.md)")
            }
            logger.warning(
                "one place's request is more than the provider's quota allows in a window, at any interval",
                metadata: ["plan": "\(plan.summary)"])
        }
        guard let needed = plan.shortestFittingInterval(), config.refresh.interval < needed else { return config }
        switch config.refresh.overQuota {
        case .refuse:
            throw ConfigError(
                file: file, field: "refresh.interval",
                reason: "\(plan.summary) (refresh.over_quota: refuse; raise the interval, or see docs/providers.md)")
        case .warn:
            logger.warning(
                "the refresh schedule exceeds the provider's quota (refresh.over_quota: warn)",
                metadata: ["plan": "\(plan.summary)"])
            return config
        case .stretch:
            var stretched = config
            stretched.refresh.interval = needed
            logger.warning(
                "refresh.interval raised to fit the provider's quota (refresh.over_quota: stretch)",
                metadata: [
                    "configured": "\(PrometheusDuration.format(config.refresh.interval))",
                    "used": "\(PrometheusDuration.format(needed))",
                    "plan": "\(plan.summary)",
                ])
            return stretched
        }
    }
}
