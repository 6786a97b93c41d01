extension RefreshPlan {
    /// The plan of an air-quality source that does not spend the weather provider's quota
    /// (`AirQualitySettings.sharesQuota`): its own account, with the free limits of its public
    /// host or none (`AirQualitySettings.ownQuota`), on the weather's interval or the one
    /// `refresh.over_quota: stretch` gave it. Nil when air quality is off or counted in the
    /// weather's plan.
    public static func airQualityOnItsOwn(_ config: Config) -> RefreshPlan? {
        guard let settings = config.airQuality, !settings.sharesQuota(with: config.provider) else { return nil }
        var plan = RefreshPlan(config, alongside: [])
        plan.provider = settings.quotaOwner
        plan.feed = "air quality on a quota of its own"
        plan.upstream = settings.source.upstreamLabel
        plan.interval = settings.stretchedInterval ?? config.refresh.interval
        plan.quotaIsStated = false
        plan.budget = CallBudget(
            quota: config.replicaShare(of: settings.ownQuota), callsPerPlace: CallCost.airQualityPerPlace(config))
        return plan
    }

    /// When this plan does not fit its quota at its interval (`refresh.over_quota: warn` kept
    /// the weather's): a warning for `--config.check` and the start-up
    /// log when its values would leave the page (older than `staleAfter`), else nil. The feed
    /// sends a batch whenever the window has room, so where a window's allowance holds some
    /// refreshes it spends them back to back, then asks nothing until they leave the window;
    /// where it holds less than one, each refresh is paced across windows.
    public func staleBetweenRefreshes(staleAfter: Double) -> String? {
        let cost = callsPerRefresh
        guard cost > 0, interval > 0, let needed = shortestFittingInterval(), needed > interval else { return nil }
        let name = feed ?? provider.rawValue
        // The window that decides the interval needed, the refreshes its allowance holds, and
        // how far apart they go at the most (the interval, or the spacing a shorter window's
        // allowance imposes). Held in less than the window, they are a burst, then a gap.
        if let window = tightestWindow, let limit = budget.quota.limits[window] {
            let fitting = (Self.margin * limit / cost + 1e-9).rounded(.down)
            let step = QuotaWindow.allCases.filter { $0.seconds < window.seconds }.compactMap {
                shortestInterval(for: $0)
            }
            .reduce(interval, max)
            // From the burst's last refresh until its first leaves the window.
            let gap = window.seconds - (fitting - 1) * step
            if fitting >= 1, fitting * step < window.seconds {
                guard gap > staleAfter else { return nil }
                return "\(name): at \(PrometheusDuration.format(interval)) it needs more than its quota allows: "
                    + "it spends \(Self.per(window))'s allowance in \(Self.number(fitting)) refreshes, then "
                    + "asks nothing for about \(PrometheusDuration.format(gap.rounded())), longer than "
                    + "refresh.stale_after \(PrometheusDuration.format(staleAfter)): its values leave the page "
                    + "meanwhile (refresh.interval \(PrometheusDuration.format(needed)) or more fits)"
            }
        }
        guard needed > staleAfter else { return nil }
        return "\(name): paced within its quota, a refresh of every place takes about "
            + "\(PrometheusDuration.format(needed)), longer than refresh.stale_after "
            + "\(PrometheusDuration.format(staleAfter)): its values leave the page between refreshes"
    }
}
