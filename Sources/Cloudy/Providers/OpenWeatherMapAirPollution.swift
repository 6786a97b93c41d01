import Logging

/// OpenWeatherMap's Air Pollution API (`data/2.5/air_pollution`): the current concentrations,
/// one place per request with the provider's key, a few at a time. Its `main.aqi` is
/// OpenWeatherMap's own 1–5 scale, neither the European index nor the EPA's, so its reports
/// carry no index and the index families have no sample for its places (docs/providers.md); its
/// forecast endpoint holds only that index and the concentrations, so it is not asked.
public final class OpenWeatherMapAirPollution: AirQualitySource {
    public let name = AirQualitySourceName.openWeatherMap
    public var providerLabel: String { Self.sourceName }
    /// One request per place, as OpenWeatherMap counts it.
    public let callsPerPlace = 1.0
    let keyed: OpenWeatherMapKeyedAPI

    /// Its calls are counted under `callsCountedAs` (`openweathermap`) when they spend the
    /// provider's quota (its free plan), else under its own name.
    public init(_ upstream: Upstream, key: Secret, callsCountedAs owner: ProviderName?) {
        keyed = OpenWeatherMapKeyedAPI(
            endpoint: UpstreamEndpoint(name: Self.sourceName, upstream: upstream, quotaOwner: owner),
            apiKey: key)
    }

    static let sourceName = "openweathermap-air-pollution"

    public func fetch(_ places: [Place], logger: Logger) -> [Result<AirQualityReport, WeatherFetchError>] {
        // The free plan allows 60 calls a minute; four at once stays far below it.
        fetchEachPlace(places, maxInFlight: 4) { place in
            self.keyed.get("/data/2.5/air_pollution?" + WeatherAPI.latitudeLongitudeQuery(place), read: Self.decode)
        }
    }

    /// `{"coord":…,"list":[{"main":{"aqi"},"components":{…},"dt"}]}` as a report: the first
    /// (current) item's components, µg/m³ → g/m³.
    static func decode(_ body: [UInt8]) -> Result<AirQualityReport, WeatherFetchError> {
        WeatherAPI.decode(Answer.self, from: body, as: "\(sourceName): answer").flatMap { answer in
            guard let item = answer.list.first else {
                return .failure(WeatherFetchError("\(sourceName): answer has no item"))
            }
            var report = AirQualityReport(observedAt: item.dt)
            let components = item.components
            let values: [Pollutant: Double?] = [
                .pm25: components.pm2_5, .pm10: components.pm10, .ozone: components.o3,
                .nitrogenDioxide: components.no2, .sulphurDioxide: components.so2, .carbonMonoxide: components.co,
            ]
            for (pollutant, value) in values {
                report.concentrations[pollutant] = value.map(Pollutant.gramsPerCubicMeter(micrograms:))
            }
            return .success(report)
        }
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Answer: Decodable {
        let list: [Item]

        struct Item: Decodable {
            let dt: Double?
            let components: Components
        }

        struct Components: Decodable {
            let co: Double?
            let no2: Double?
            let o3: Double?
            let so2: Double?
            let pm2_5: Double?
            let pm10: Double?
        }
    }
}
