import Logging

/// The public hosts' fair-use floors for the refresh interval.
public enum FairUse {
    public static func minimumInterval(provider: ProviderName, url: String) -> Double? {
        let host = url.lowercased()
        switch provider {
        case .openMeteo
        where host.hasPrefix("https://api.open-meteo.com") || host.hasPrefix("http://api.open-meteo.com"):
            return 60  // current conditions change every 15 minutes; 10 000 calls a day are free
        case .openWeatherMap:
            // One call per place per ten minutes whatever the host: OpenWeatherMap updates no
            // faster and bills or throttles every call (the provider also enforces this per place).
            return OpenWeatherMapProvider.minimumCallSpacing
        case .metNorway where host.contains("api.met.no"):
            return 600  // MET Norway asks clients to honour Expires (about 30 minutes)
        default:
            return nil
        }
    }

    /// Against a provider's public host, the interval is raised to its fair-use minimum (and
    /// logged); any other URL (a self-hosted server, a test fake) gets the interval as written —
    /// except OpenWeatherMap, whose ten-minute call budget holds everywhere.
    static func clampInterval(_ config: Config, logger: Logger) -> Config {
        guard let minimum = minimumInterval(provider: config.provider.name, url: config.provider.url),
            config.refresh.interval < minimum
        else { return config }
        var clamped = config
        clamped.refresh.interval = minimum
        logger.warning(
            "refresh.interval raised to the provider's fair-use minimum",
            metadata: [
                "configured": "\(PrometheusDuration.format(config.refresh.interval))",
                "used": "\(PrometheusDuration.format(minimum))",
                "provider": "\(config.provider.name.rawValue)",
            ])
        return clamped
    }
}
