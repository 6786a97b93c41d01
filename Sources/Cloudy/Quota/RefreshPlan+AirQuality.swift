extension RefreshPlan {
    /// The plan of an air-quality source that does not spend the weather provider's quota
    /// (`AirQualitySettings.sharesQuota`): its own account, with the free limits of its public
    /// host or none (`AirQualitySettings.ownQuota`), on the weather's interval. Nil when air
    /// quality is off or counted in the weather's plan.
    public static func airQualityOnItsOwn(_ config: Config) -> RefreshPlan? {
        guard let settings = config.airQuality, !settings.sharesQuota(with: config.provider) else { return nil }
        var plan = RefreshPlan(config, alongside: [])
        plan.provider = settings.quotaOwner
        plan.feed = "air quality on a quota of its own"
        plan.upstream = settings.source.upstreamLabel
        plan.quotaIsStated = false
        plan.budget = CallBudget(
            quota: config.replicaShare(of: settings.ownQuota), callsPerPlace: CallCost.airQualityPerPlace(config))
        return plan
    }

    /// When a refresh of this plan does not fit its quota: the feed paces it, so one takes about
    /// the shortest fitting interval, and values older than `staleAfter` leave the page between
    /// two. A warning for `--config.check` then, else nil.
    public func pacedPastStaleness(staleAfter: Double) -> String? {
        guard let needed = shortestFittingInterval(), needed > max(interval, staleAfter) else { return nil }
        return "\(feed ?? provider.rawValue): paced within its quota, a refresh of every place takes about "
            + "\(PrometheusDuration.format(needed)), longer than refresh.stale_after "
            + "\(PrometheusDuration.format(staleAfter)): its values leave the page between refreshes"
    }
}
