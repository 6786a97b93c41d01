import Logging

/// Builds the provider a config names, as the weather feed's source: the one place that knows
/// every provider's initialiser. Its requests' timeout is `timeout`'s, which the weather feed sets.
enum ProviderFactory {
    static func make(
        _ config: Config, timeout: RequestTimeout, client: CurlHTTPClient, recorder: UpstreamRecording,
        logger: Logger, clock: ExporterClock
    ) -> any FeedSource<WeatherSnapshot> {
        let settings = config.provider
        let upstream = Upstream(
            baseURL: settings.url, limit: timeout, client: client, recorder: recorder, clock: clock)
        switch settings.name {
        case .openMeteo:
            // The free public host runs one request per client at a time; any other takes several.
            return OpenMeteoProvider(
                upstream, forecast: config.forecast, apiKey: settings.apiKey,
                parallelRequests: settings.isPublicHost ? 1 : config.refresh.parallelRequests)
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
