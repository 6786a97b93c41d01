import Foundation
import Logging
import NIOConcurrencyHelpers

/// OpenWeatherMap's free endpoints: current weather (`data/2.5/weather`) and the 5-day /
/// 3-hour forecast (`data/2.5/forecast`), one place per request, metric units, key in `appid`.
/// At most one call per endpoint per place every ten minutes (the API updates no faster and
/// counts every call): within that window a place keeps its last answer without a request.
public final class OpenWeatherMapProvider: WeatherProvider {
    public let name = ProviderName.openWeatherMap
    public static let minimumCallSpacing = 600.0
    let baseURL: String
    let apiKey: Secret
    let forecast: ForecastSettings
    let timeout: Double
    let client: CurlHTTPClient
    let recorder: UpstreamRecording
    /// One Call 3.0 (one request per place) instead of the two 2.5 endpoints.
    let oneCall: Bool
    /// Last good answer per place name, with when and for which coordinates it was fetched.
    private let recent = NIOLockedValueBox([String: (fetched: Double, latitude: Double, longitude: Double, snapshot: WeatherSnapshot)]())

    public init(baseURL: String, apiKey: Secret, forecast: ForecastSettings, timeout: Double, client: CurlHTTPClient,
                recorder: UpstreamRecording, oneCall: Bool = false) {
        self.oneCall = oneCall
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.forecast = forecast
        self.timeout = timeout
        self.client = client
        self.recorder = recorder
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // The free plan allows 60 calls a minute; four at once stays far below it.
        fetchEachPlace(places, maxInFlight: 4) { place in self.fetch(place) }
    }

    func fetch(_ place: Place) -> Result<WeatherSnapshot, WeatherFetchError> {
        let now = Date().timeIntervalSince1970
        if let last = recent.withLockedValue({ $0[place.name] }), now - last.fetched < Self.minimumCallSpacing,
           last.latitude == place.latitude, last.longitude == place.longitude {
            return .success(last.snapshot)
        }
        let query = "lat=\(OpenMeteoProvider.coordinate(place.latitude))&lon=\(OpenMeteoProvider.coordinate(place.longitude))&units=metric"
        if oneCall {
            let outcome = get(Self.oneCallPath + "?" + query + "&exclude=minutely,alerts")
                .flatMap { Self.decode(oneCall: $0, place: place, settings: forecast) }
            if case let .success(snapshot) = outcome {
                recent.withLockedValue { $0[place.name] = (now, place.latitude, place.longitude, snapshot) }
            }
            return outcome
        }
        let currentBody: [UInt8], forecastBody: [UInt8]
        switch get("/data/2.5/weather?" + query) {
        case let .success(body): currentBody = body
        case let .failure(error): return .failure(error)
        }
        switch get("/data/2.5/forecast?" + query) {
        case let .success(body): forecastBody = body
        case let .failure(error): return .failure(error)
        }
        let outcome = Self.decode(current: currentBody, forecast: forecastBody, place: place, settings: forecast)
        if case let .success(snapshot) = outcome {
            recent.withLockedValue { $0[place.name] = (now, place.latitude, place.longitude, snapshot) }
        }
        return outcome
    }

    /// One GET with the key; the answer's body on 200, else a failure that names the status.
    private func get(_ pathAndQuery: String) -> Result<[UInt8], WeatherFetchError> {
        var request = HTTPRequest(url: baseURL + pathAndQuery + "&appid=" + apiKey.reveal, headers: [("Accept", "application/json")],
                                  timeout: timeout)
        request.followRedirects = false  // the key must not travel to another host
        switch client.fetch(request, countedAs: name.rawValue, by: recorder) {
        case let .failure(error):
            return .failure(WeatherFetchError(apiKey.scrub(error.message)))
        case let .success(response):
            guard response.status == 200 else { return .failure(Self.httpError(response, key: apiKey)) }
            return .success(response.body)
        }
    }

    static func httpError(_ response: HTTPResponse, key: Secret) -> WeatherFetchError {
        let retryAfter = response.headers["retry-after"].flatMap { RetryAfter.seconds($0) }
        if response.status == 401 {
            return WeatherFetchError("openweathermap: invalid API key (HTTP 401)")
        }
        var message = "openweathermap: HTTP \(response.status)"
        if let body = try? JSONDecoder().decode(OWMError.self, from: Data(response.body)), let text = body.message {
            message += ": " + String(text.prefix(200))
        }
        return WeatherFetchError(key.scrub(message), retryAfter: retryAfter, isRateLimit: response.status == 429)
    }

    public static func decode(current currentBody: [UInt8], forecast forecastBody: [UInt8], place: Place,
                              settings: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        let decoder = JSONDecoder()
        let current: OWMCurrent
        let list: OWMForecast
        do {
            current = try decoder.decode(OWMCurrent.self, from: Data(currentBody))
        } catch {
            return .failure(WeatherFetchError("openweathermap: current weather is not valid: \(OpenMeteoProvider.describe(error))"))
        }
        do {
            list = try decoder.decode(OWMForecast.self, from: Data(forecastBody))
        } catch {
            return .failure(WeatherFetchError("openweathermap: forecast is not valid: \(OpenMeteoProvider.describe(error))"))
        }
        guard let now = current.dt, now.isFinite, let main = current.main else {
            return .failure(WeatherFetchError("openweathermap: current weather lacks dt or main"))
        }
        let offset = current.timezone ?? list.city?.timezone ?? 0
        let condition = current.weather?.first
        var snapshot = WeatherSnapshot(
            current: CurrentConditions(
                observedAt: now,
                temperatureCelsius: main.temp,
                apparentTemperatureCelsius: main.feels_like,
                relativeHumidityRatio: main.humidity.map { $0 / 100 },
                windSpeedMetersPerSecond: current.wind?.speed,
                windGustMetersPerSecond: current.wind?.gust,
                windDirectionDegrees: current.wind?.deg,
                pressureMslPascals: (main.sea_level ?? main.pressure).map { $0 * 100 },
                cloudCoverRatio: current.clouds?.all.map { $0 / 100 },
                // OWM leaves out `rain`/`snow` when nothing falls.
                precipitationMeters: ((current.rain?.oneHour ?? 0) + (current.snow?.oneHour ?? 0)) / 1000,
                visibilityMeters: current.visibility,
                isDay: condition?.icon.map { $0.hasSuffix("d") },
                conditionCode: condition?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:))
            ),
            timezone: place.timezone,
            utcOffsetSeconds: offset,
            latitude: current.coord?.lat,
            longitude: current.coord?.lon
        )
        let entries = (list.list ?? []).filter { $0.dt?.isFinite == true }
        if settings.hours > 0 {
            snapshot.hourly = entries.compactMap { entry in
                guard let time = entry.dt, let ahead = hoursAhead(time, now: now), ahead >= 1, ahead <= settings.hours else { return nil }
                return HourlyForecast(
                    hoursAhead: ahead, time: time, temperatureCelsius: entry.main?.temp,
                    precipitationProbabilityRatio: entry.pop,
                    // A 3-hour amount spread evenly: the best estimate of the hour before the step.
                    precipitationMeters: (entry.threeHourPrecipitation ?? 0) / 3 / 1000,
                    windSpeedMetersPerSecond: entry.wind?.speed,
                    conditionCode: entry.weather?.first?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:))
                )
            }
        }
        let steps = entries.map { entry in
            ForecastStep(time: entry.dt!, temperatureMin: entry.main?.temp_min ?? entry.main?.temp,
                         temperatureMax: entry.main?.temp_max ?? entry.main?.temp,
                         precipitation: (entry.threeHourPrecipitation ?? 0) / 1000, precipitationProbability: entry.pop,
                         windSpeed: entry.wind?.speed, windGust: entry.wind?.gust,
                         conditionCode: entry.weather?.first?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:)))
        }
        snapshot.daily = DailyAggregate.days(steps, now: now, days: settings.days) { _ in offset }
        if let index = snapshot.daily.firstIndex(where: { $0.daysAhead == 0 }) {
            snapshot.daily[index].sunrise = current.sys?.sunrise
            snapshot.daily[index].sunset = current.sys?.sunset
        }
        return .success(snapshot)
    }
}

// The JSON of the two endpoints; every field optional, as OWM leaves out what did not occur.
struct OWMCondition: Decodable { let id: Int?; let icon: String? }
struct OWMMain: Decodable {
    let temp, feels_like, temp_min, temp_max, pressure, sea_level, humidity: Double?
}
struct OWMWind: Decodable { let speed, deg, gust: Double? }
struct OWMClouds: Decodable { let all: Double? }
struct OWMAmount: Decodable {
    let oneHour: Double?
    let threeHours: Double?
    enum CodingKeys: String, CodingKey {
        case oneHour = "1h"
        case threeHours = "3h"
    }
}
struct OWMCoord: Decodable { let lat, lon: Double? }
struct OWMSys: Decodable { let sunrise, sunset: Double? }

struct OWMCurrent: Decodable {
    let coord: OWMCoord?
    let weather: [OWMCondition]?
    let main: OWMMain?
    let visibility: Double?
    let wind: OWMWind?
    let clouds: OWMClouds?
    let rain: OWMAmount?
    let snow: OWMAmount?
    let dt: Double?
    let sys: OWMSys?
    let timezone: Int?
}

struct OWMForecast: Decodable {
    struct Entry: Decodable {
        let dt: Double?
        let main: OWMMain?
        let weather: [OWMCondition]?
        let wind: OWMWind?
        let pop: Double?
        let rain: OWMAmount?
        let snow: OWMAmount?

        /// Rain and snow over the step's three hours; nil when OWM left both out (none fell).
        var threeHourPrecipitation: Double? {
            if rain?.threeHours == nil, snow?.threeHours == nil { return nil }
            return (rain?.threeHours ?? 0) + (snow?.threeHours ?? 0)
        }
    }
    struct City: Decodable { let timezone: Int? }
    let list: [Entry]?
    let city: City?
}

/// `cod` is a number in some error bodies and a string in others; only `message` is read.
struct OWMError: Decodable { let message: String? }
