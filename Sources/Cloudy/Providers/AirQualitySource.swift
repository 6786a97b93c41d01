import Logging

/// An air-quality API: a `FeedSource` of `AirQualityReport`s, asked by the air-quality feed
/// (`AirQualityFeed`) with one outcome per place, in the order of `places`, blocking the
/// calling (Dispatch) thread, never more requests at once than the API tolerates. Its
/// `providerLabel` names its requests in the log and in `cloudy_exporter_upstream_requests_total`
/// (`open-meteo-air-quality`, `openweathermap-air-pollution`); its calls are counted under the
/// provider whose quota they spend (`open-meteo`, `openweathermap`).
public protocol AirQualitySource: FeedSource where Report == AirQualityReport {
    var name: AirQualitySourceName { get }
    /// What one place costs per refresh as the API's owner counts it (Open-Meteo's weight;
    /// one call for OpenWeatherMap).
    var callsPerPlace: Double { get }
}

extension AirQualitySettings {
    /// The source these settings name. `apiKey` is the provider's (OpenWeatherMap needs it; the
    /// loader refuses a config without one), `forecast` sets the horizon. Its calls are counted
    /// under the weather provider's name when they spend its quota (`sharesQuota`), else under
    /// the source's own, as its account of its own is.
    public func makeSource(
        _ upstream: Upstream, forecast: ForecastSettings, apiKey: Secret?, sharingQuota: Bool
    ) -> any AirQualitySource {
        let owner = sharingQuota ? quotaOwner : nil
        switch source {
        case .openMeteo:
            return OpenMeteoAirQuality(upstream, forecast: forecast, pollen: pollen, callsCountedAs: owner)
        case .openWeatherMap:
            return OpenWeatherMapAirPollution(upstream, key: apiKey ?? Secret(""), callsCountedAs: owner)
        }
    }

    /// The provider whose quota these settings' calls spend.
    public var quotaOwner: ProviderName {
        switch source {
        case .openMeteo: return .openMeteo
        case .openWeatherMap: return .openWeatherMap
        }
    }

    /// Whether the calls spend the weather `provider`'s quota, so both feeds plan and pace on
    /// one `QuotaAccount`: Open-Meteo's free hosts count the forecast and the air quality on one
    /// limit per client (docs/providers.md), so both on the free hosts share, and so do both on
    /// one self-hosted server (it serves every API); two servers of one's own limit nothing
    /// together. OpenWeatherMap's air pollution spends the provider's key.
    public func sharesQuota(with provider: ProviderSettings) -> Bool {
        guard provider.name == quotaOwner else { return false }
        switch source {
        case .openMeteo:
            guard provider.apiKey == nil else { return false }
            if provider.isPublicHost || isPublicHost { return provider.isPublicHost && isPublicHost }
            return ProviderSettings.isSameServer(provider.url, url)
        // One Call's subscription counts One Call only; the Air Pollution API is on the free plan.
        case .openWeatherMap: return !provider.oneCall
        }
    }

    /// Whether what an account knows of `provider` at `url` is known of this source's own quota
    /// too: an Open-Meteo server that counts the air quality with the forecast (as
    /// `sharesQuota`). Not for OpenWeatherMap, whose free plan and One Call subscription are
    /// one provider and URL with two quotas.
    public func countsWith(_ provider: ProviderName, url: String) -> Bool {
        source == .openMeteo && sharesQuota(with: ProviderSettings(name: provider, url: url))
    }

    /// Whether `url` is the source's public host.
    public var isPublicHost: Bool { ProviderSettings.isPublicHost(url, of: source.defaultURL) }

    /// The quota of an air-quality source that does not share the provider's: the free limits of
    /// its public host (Open-Meteo's; OpenWeatherMap's free plan beside a One Call subscription),
    /// none elsewhere.
    public var ownQuota: Quota {
        guard isPublicHost else { return .unlimited }
        return Quota.freeTier(ProviderSettings(name: source == .openMeteo ? .openMeteo : .openWeatherMap))
    }
}
