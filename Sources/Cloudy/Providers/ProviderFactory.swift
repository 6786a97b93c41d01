import Logging

/// Builds the provider a config names: the one place that knows every provider's initialiser.
enum ProviderFactory {
    static func make(
        _ config: Config, client: CurlHTTPClient, recorder: UpstreamRecording, logger: Logger,
        clock: ExporterClock
    ) -> WeatherProvider {
        let settings = config.provider
        let upstream = Upstream(
            baseURL: settings.url, timeout: config.refresh.timeout, client: client, recorder: recorder, clock: clock)
        switch settings.name {
        case .openMeteo:
            return OpenMeteoProvider(upstream, forecast: config.forecast, apiKey: settings.apiKey)
        case .openWeatherMap:
            // Config validation guarantees the key.
            return OpenWeatherMapProvider(
                upstream, apiKey: settings.apiKey ?? Secret(""), forecast: config.forecast, oneCall: settings.oneCall)
        case .metNorway:
            return METNorwayProvider(upstream, forecast: config.forecast, logger: logger)
        case .darkSky:
            // Config validation guarantees the key.
            return DarkSkyProvider(upstream, apiKey: settings.apiKey ?? Secret(""), forecast: config.forecast)
        }
    }
}
