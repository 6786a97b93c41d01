import Logging

/// Open-Meteo's air-quality API (CAMS models, no key): batched like its forecast API
/// (`OpenMeteoBatches`), and counted by Open-Meteo on the same free quota: its calls are counted
/// under `callsCountedAs` (`open-meteo`) when they spend the forecast's.
public final class OpenMeteoAirQuality: AirQualitySource {
    public let name = AirQualitySourceName.openMeteo
    public var providerLabel: String { Self.sourceName }
    let batches: OpenMeteoBatches
    let forecast: ForecastSettings
    let pollen: Bool

    public init(
        _ upstream: Upstream, forecast: ForecastSettings, pollen: Bool, callsCountedAs owner: ProviderName?,
        placesPerRequest: Int = 100
    ) {
        batches = OpenMeteoBatches(
            endpoint: UpstreamEndpoint(name: Self.sourceName, upstream: upstream, quotaOwner: owner),
            placesPerRequest: placesPerRequest, apiKey: nil)
        self.forecast = forecast
        self.pollen = pollen
    }

    static let currentVariables = ["european_aqi", "us_aqi"] + Pollutant.allCases.map(\.rawValue)
    /// The indices for the forecast; pollen is read from the hourly series only (its current
    /// value is the current hour's), so it is not asked twice.
    static let hourlyIndexVariables = ["european_aqi", "us_aqi"]
    static let pollenVariables = Plant.allCases.map { $0.rawValue + "_pollen" }

    static func hourlyVariables(pollen: Bool) -> [String] { hourlyIndexVariables + (pollen ? pollenVariables : []) }

    /// `forecast_days` (the API takes 0…7): the days of `forecast` and the days its hours reach
    /// into, as the forecast asks (`OpenMeteoProvider.forecastDays`), at most the API's 7.
    static func forecastDays(for forecast: ForecastSettings) -> Int {
        min(7, OpenMeteoProvider.forecastDays(for: forecast))
    }

    /// Open-Meteo's weight of one place (`CallCost.openMeteoAirQuality`).
    public var callsPerPlace: Double { CallCost.openMeteoAirQuality(forecast, pollen: pollen) }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<AirQualityReport, WeatherFetchError>] {
        let forecast = self.forecast
        return batches.fetch(places, logger: logger, weight: callsPerPlace, url: url(for:)) {
            Self.decode($0, places: $1, forecast: forecast)
        }
    }

    /// The request URL for one batch of places.
    public func url(for places: [Place]) -> String {
        var query = OpenMeteoBatches.placesQuery(places)
        query.append("current=" + Self.currentVariables.joined(separator: ","))
        query.append("hourly=" + Self.hourlyVariables(pollen: pollen).joined(separator: ","))
        query.append("forecast_days=\(Self.forecastDays(for: forecast))")
        query.append("timeformat=unixtime")
        return batches.endpoint.baseURL + "/v1/air-quality?" + query.joined(separator: "&")
    }

    /// An answer for `places` as their reports; see `OpenMeteoBatches.entries` for what fails alone.
    public static func decode(
        _ body: [UInt8], places: [Place], forecast: ForecastSettings
    ) -> [Result<AirQualityReport, WeatherFetchError>] {
        let entries = OpenMeteoBatches.entries(
            body, count: places.count, as: OpenMeteoAirQualityAnswer.self, source: sourceName)
        return zip(entries, places).map { entry, place in
            entry.flatMap { $0.report(forecast: forecast, zone: place.timezone) }
        }
    }

    static let sourceName = "open-meteo-air-quality"
}
