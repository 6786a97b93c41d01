import Logging

extension CloudyApplication {
    /// The air-quality feed, built whether or not the config has `air_quality:` (a reload may
    /// turn it on). It has an HTTP client of its own: stopping it (a reload that moves it to
    /// another quota account) must not cancel the weather's requests.
    static func airQualityFeed(
        _ config: Config, store: WeatherStore, weather: Refresher, userAgent: String, logger: Logger,
        clock: ExporterClock
    ) -> AirQualityFeed {
        AirQualityFeed(
            config: config, store: store, weather: weather, client: CurlHTTPClient(userAgent: userAgent),
            logger: logger, clock: clock)
    }
}
