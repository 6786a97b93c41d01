import Logging

/// An air-quality API, shaped like `WeatherProvider` and the scheduler's `FeedSource` (with
/// `Report == AirQualityReport`): one outcome per place, in the order of `places`, blocking the
/// calling (Dispatch) thread, never more requests at once than the API tolerates.
public protocol AirQualitySource: Sendable {
    var name: AirQualitySourceName { get }
    /// Names the source's requests in the log and in `cloudy_exporter_upstream_requests_total`
    /// (`open-meteo-air-quality`, `openweathermap-air-pollution`); its calls are counted under
    /// the provider whose quota they spend (`open-meteo`, `openweathermap`).
    var providerLabel: String { get }
    /// What one place costs per refresh as the API's owner counts it (Open-Meteo's weight;
    /// one call for OpenWeatherMap).
    var callsPerPlace: Double { get }
    func fetch(_ places: [Place], logger: Logger) -> [Result<AirQualityReport, WeatherFetchError>]
}

extension AirQualitySettings {
    /// The source these settings name. `apiKey` is the provider's (OpenWeatherMap needs it; the
    /// loader refuses a config without one), `forecast` sets the horizon.
    public func makeSource(_ upstream: Upstream, forecast: ForecastSettings, apiKey: Secret?) -> AirQualitySource {
        switch source {
        case .openMeteo:
            return OpenMeteoAirQuality(upstream, forecast: forecast, pollen: pollen)
        case .openWeatherMap:
            return OpenWeatherMapAirPollution(upstream, key: apiKey ?? Secret(""))
        }
    }
}
