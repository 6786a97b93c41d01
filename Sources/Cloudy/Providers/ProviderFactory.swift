import Logging

/// Builds the provider a config names: the one place that knows every provider's initialiser.
enum ProviderFactory {
    static func make(
        _ config: Config, client: CurlHTTPClient, recorder: UpstreamRecording, logger: Logger,
        clock: ExporterClock
    ) -> WeatherProvider {
        let settings = config.provider
        switch settings.name {
        case .openMeteo:
            return OpenMeteoProvider(
                baseURL: settings.url, forecast: config.forecast, timeout: config.refresh.timeout,
                client: client, recorder: recorder, apiKey: settings.apiKey, clock: clock)
        case .openWeatherMap:
            // Config validation guarantees the key.
            return OpenWeatherMapProvider(
                baseURL: settings.url, apiKey: settings.apiKey ?? Secret(""),
                forecast: config.forecast, timeout: config.refresh.timeout, client: client,
                recorder: recorder, oneCall: settings.oneCall, clock: clock)
        case .metNorway:
            return METNorwayProvider(
                baseURL: settings.url, forecast: config.forecast, timeout: config.refresh.timeout,
                client: client, recorder: recorder, logger: logger, clock: clock)
        }
    }
}
