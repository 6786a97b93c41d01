import Logging

extension FairUse {
    /// Applies `refresh.over_quota` to an air-quality source on a quota of its own
    /// (`RefreshPlan.airQualityOnItsOwn`), as `fitQuota` does to the weather's: when the weather's
    /// interval needs more than that quota allows, `stretch` gives the air quality the shortest
    /// interval that fits (`AirQualitySettings.stretchedInterval`; the weather keeps its own),
    /// `warn` keeps the weather's and logs it, `refuse` makes it a config error naming
    /// `refresh.interval`, the interval it runs on. Without it the feed would spend a window's
    /// allowance in a burst of refreshes, then ask nothing for hours.
    static func fitAirQualityQuota(_ config: Config, file: String?, logger: Logger) throws(ConfigError) -> Config {
        var fitted = config
        fitted.airQuality?.stretchedInterval = nil
        guard let plan = RefreshPlan.airQualityOnItsOwn(fitted), let needed = plan.shortestFittingInterval(),
            plan.interval < needed
        else { return fitted }
        switch config.refresh.overQuota {
        case .refuse:
            // The interval is the weather's: the field to change; or pollen off, where that fits.
            var withoutPollen = fitted
            withoutPollen.airQuality?.pollen = false
            let pollenOffFits =
                fitted.airQuality?.pollen == true && RefreshPlan.airQualityOnItsOwn(withoutPollen)?.fits == true
            let pollen = pollenOffFits ? " or air_quality.pollen: false" : ""
            throw ConfigError(
                file: file, field: "refresh.interval",
                reason:
                    "\(plan.summary) (refresh.over_quota: refuse; raise the interval\(pollen), or see docs/providers.md)"
            )
        case .warn:
            logger.warning(
                "the air quality's schedule exceeds its own quota (refresh.over_quota: warn)",
                metadata: ["plan": "\(plan.summary)"])
        case .stretch:
            fitted.airQuality?.stretchedInterval = needed
            logger.warning(
                "the air quality's interval raised to fit its own quota (refresh.over_quota: stretch)",
                metadata: [
                    "weather": "\(PrometheusDuration.format(config.refresh.interval))",
                    "used": "\(PrometheusDuration.format(needed))",
                    "plan": "\(plan.summary)",
                ])
        }
        return fitted
    }
}
