/// `air_quality:`: where air quality and pollen come from. Absent from the config: nothing is
/// asked and no air-quality family is on the page.
public struct AirQualitySettings: Sendable, Equatable {
    public var source: AirQualitySourceName
    /// Base URL without a trailing slash.
    public var url: String
    /// Whether pollen is asked for (Open-Meteo only: OpenWeatherMap has none).
    public var pollen: Bool
    /// Not a config key: the interval in use when `refresh.over_quota: stretch` raised it past
    /// `refresh.interval` to fit a quota of the source's own (`FairUse.fitAirQualityQuota`);
    /// nil: the weather's interval.
    public var stretchedInterval: Double?

    public init(source: AirQualitySourceName = .openMeteo, url: String? = nil, pollen: Bool = true) {
        self.source = source
        self.url = url ?? source.defaultURL
        self.pollen = pollen
    }

    /// What the source's requests are made of: these settings without the interval in use.
    var asked: AirQualitySettings {
        var asked = self
        asked.stretchedInterval = nil
        return asked
    }
}

public enum AirQualitySourceName: String, Sendable, CaseIterable {
    case openMeteo = "open-meteo"
    case openWeatherMap = "openweathermap"

    public var defaultURL: String {
        switch self {
        case .openMeteo: return "https://air-quality-api.open-meteo.com"
        case .openWeatherMap: return "https://api.openweathermap.org"
        }
    }

    /// The name the source's requests, and on a quota of its own its calls, are counted under.
    public var upstreamLabel: String {
        switch self {
        case .openMeteo: return OpenMeteoAirQuality.sourceName
        case .openWeatherMap: return OpenWeatherMapAirPollution.sourceName
        }
    }
}

extension ConfigLoader {
    static let airQualityKeys = ["source", "url", "pollen"]

    /// `air_quality:`, or nil when the config has none. OpenWeatherMap's source spends the
    /// provider's key (`provider.api_key_file` or `CLOUDY_API_KEY`) and is refused without one.
    static func airQualitySettings(_ document: YAMLMapping, provider: ProviderSettings) throws(ConfigError)
        -> AirQualitySettings?
    {
        // Empty, `~` or `null` counts as absent, as for every key: off (`{}` turns it on).
        guard let section = try document.mapping("air_quality") else { return nil }
        try section.rejectUnknownKeys(airQualityKeys)
        let source = try section.oneOf("source", AirQualitySourceName.self) ?? .openMeteo
        // The key is the provider's: only an OpenWeatherMap key may go to OpenWeatherMap (provider
        // openweathermap without a key is refused before this, on provider.api_key_file).
        if source == .openWeatherMap, provider.name != .openWeatherMap {
            throw section.error(
                "source",
                "openweathermap spends the API key of provider openweathermap; with provider "
                    + "\(provider.name.rawValue) use source: open-meteo")
        }
        var settings = AirQualitySettings(source: source, url: try section.url("url"))
        if let pollen = try section.bool("pollen") {
            // Asked for where there is none, it would be left out without a word.
            if pollen, source == .openWeatherMap {
                throw section.error("pollen", "openweathermap has no pollen; use source: open-meteo, or leave it out")
            }
            settings.pollen = pollen
        }
        return settings
    }
}
