import Logging

extension CloudyApplication {
    /// The air-quality feed, built whether or not the config has `air_quality:` (a reload may
    /// turn it on). It has an HTTP client of its own: stopping it (a reload that moves it to
    /// another quota account) must not cancel the weather's requests. On a quota of its own it
    /// keeps its calls and a refusal in `<storage.path>/quota-air-quality.json`.
    static func airQualityFeed(
        _ config: Config, store: WeatherStore, weather: Refresher, userAgent: String, storagePath: String,
        logger: Logger, clock: ExporterClock
    ) -> AirQualityFeed {
        AirQualityFeed(
            config: config, store: store, weather: weather, client: CurlHTTPClient(userAgent: userAgent),
            logger: logger, clock: clock, ownQuotaFile: QuotaState.airQualityFile(in: storagePath))
    }
}
