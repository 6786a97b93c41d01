/// What a refresh costs, as each provider counts it, from what Cloudy actually asks it for.
public enum CallCost {
    /// A count of calls rounded to a millionth, as the page and the log show it: a sum of
    /// fractional weights carries binary noise (20.299999999999997, 359.59999999999997).
    public static func rounded(_ calls: Double) -> Double {
        (calls * 1e6).rounded() / 1e6
    }

    /// Open-Meteo's weight of one place in one request: `max(1, nVars/10 × max(1, nDays/14))`,
    /// where `variables` counts the current, hourly and daily variables asked for and `days` the
    /// days covered (forecast_days + past_days). A request for several places costs the sum.
    public static func openMeteo(variables: Int, days: Int) -> Double {
        max(1, Double(variables) / 10 * max(1, Double(days) / 14))
    }

    /// What one place costs Open-Meteo with `forecast`: the variables and days of
    /// `OpenMeteoProvider.url(for:)`.
    public static func openMeteo(_ forecast: ForecastSettings) -> Double {
        var variables = OpenMeteoProvider.currentVariables.count
        if forecast.hours > 0 { variables += OpenMeteoProvider.hourlyVariables.count }
        if forecast.days > 0 { variables += OpenMeteoProvider.dailyVariables.count }
        return openMeteo(variables: variables, days: OpenMeteoProvider.forecastDays(for: forecast))
    }

    /// What one place costs Open-Meteo's air-quality API (the same counting, on the same free
    /// quota as the forecast): the current and hourly variables of `OpenMeteoAirQuality.url(for:)`
    /// over its days; 1.6 with pollen, 1.0 without.
    public static func openMeteoAirQuality(_ forecast: ForecastSettings, pollen: Bool) -> Double {
        openMeteo(
            variables: OpenMeteoAirQuality.currentVariables.count
                + OpenMeteoAirQuality.hourlyVariables(pollen: pollen).count,
            days: OpenMeteoAirQuality.forecastDays(for: forecast))
    }

    /// What one place's air quality costs per refresh with `config`, in its source's counting:
    /// 0 without `air_quality:`, Open-Meteo's weight, one call for OpenWeatherMap.
    public static func airQualityPerPlace(_ config: Config) -> Double {
        switch config.airQuality?.source {
        case nil: return 0
        case .openMeteo?: return openMeteoAirQuality(config.forecast, pollen: config.airQuality?.pollen ?? true)
        case .openWeatherMap?: return 1
        }
    }

    /// What one place costs per refresh with `config`'s provider: Open-Meteo's weight; one call
    /// per endpoint for OpenWeatherMap (current weather and forecast with 2.5, one with One Call
    /// 3.0); one request for MET Norway (an upper bound: it is not asked again before `Expires`)
    /// and for Dark Sky.
    public static func perPlace(_ config: Config) -> Double {
        switch config.provider.name {
        case .openMeteo: return openMeteo(config.forecast)
        case .openWeatherMap: return config.provider.oneCall ? 1 : 2
        case .metNorway, .darkSky: return 1
        }
    }
}

/// A feed beside the weather that spends the weather provider's quota at `refresh.interval`
/// (through the same `QuotaAccount`), and what one place costs it there.
public struct QuotaSpending: Sendable, Equatable {
    /// The feed's name, as in the log.
    public var feed: String
    public var callsPerPlace: Double

    public init(feed: String, callsPerPlace: Double) {
        self.feed = feed
        self.callsPerPlace = callsPerPlace
    }

    /// The feeds `config` runs beside the weather on its provider's quota: the air quality when
    /// it spends the provider's (`AirQualitySettings.sharesQuota`). The plan, the
    /// `--config.check` line and `cloudy_exporter_upstream_planned_calls` count them.
    public static func alongside(_ config: Config) -> [QuotaSpending] {
        guard let airQuality = config.airQuality, airQuality.sharesQuota(with: config.provider) else { return [] }
        return [QuotaSpending(feed: "air quality", callsPerPlace: CallCost.airQualityPerPlace(config))]
    }
}

extension HTTPClientError.Kind {
    /// Whether a request that failed this way may have reached the provider, which then counts
    /// it: not when the name did not resolve, the connection or TLS handshake failed, or the
    /// request was never sent (a bad URL, or the exporter shutting down first). Anything later
    /// (a timeout, a cut-off answer, a shutdown while the answer was awaited) is counted, to be
    /// safe: a restart loop must not spend the quota again.
    var mayHaveReachedProvider: Bool {
        switch self {
        case .connect, .tls, .invalidRequest, .notSent: return false
        default: return true
        }
    }
}
