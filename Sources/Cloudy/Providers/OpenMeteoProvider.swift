import Logging
import NIOConcurrencyHelpers

/// Open-Meteo's forecast API (the default provider, no key). Many places go in one request
/// (comma-separated coordinates; the answer is then a JSON array in request order), at most
/// `placesPerRequest` per request. Against the public host requests run one after another: the
/// free tier runs one request per client at a time and refuses more than a few in flight; a
/// self-hosted or commercial host gets up to `parallelRequests` at once (`refresh.parallel_requests`).
public final class OpenMeteoProvider: WeatherProvider {
    public let name = ProviderName.openMeteo
    let batches: OpenMeteoBatches
    let forecast: ForecastSettings
    public var placesPerRequest: Int { batches.placesPerRequest }
    /// Most requests in flight at once.
    public var parallelRequests: Int { batches.parallelRequests }

    public init(
        _ upstream: Upstream, forecast: ForecastSettings, apiKey: Secret? = nil, placesPerRequest: Int = 100,
        parallelRequests: Int = 1
    ) {
        batches = OpenMeteoBatches(
            endpoint: UpstreamEndpoint(provider: .openMeteo, upstream: upstream), placesPerRequest: placesPerRequest,
            apiKey: apiKey, parallelRequests: max(1, parallelRequests))
        self.forecast = forecast
    }

    static let currentVariables = [
        "temperature_2m", "relative_humidity_2m", "apparent_temperature", "dew_point_2m", "is_day", "precipitation",
        "weather_code", "cloud_cover", "pressure_msl", "wind_speed_10m", "wind_direction_10m", "wind_gusts_10m",
        "uv_index", "visibility",
    ]
    static let hourlyVariables = [
        "temperature_2m", "precipitation_probability", "precipitation", "wind_speed_10m", "weather_code",
    ]
    static let dailyVariables = [
        "weather_code", "temperature_2m_max", "temperature_2m_min", "sunrise", "sunset", "uv_index_max",
        "precipitation_sum", "precipitation_probability_max", "wind_speed_10m_max", "wind_gusts_10m_max",
    ]

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        let forecast = self.forecast
        let outcomes = batches.fetch(places, logger: logger, weight: CallCost.openMeteo(forecast), url: url(for:)) {
            Self.decode($0, places: $1, forecast: forecast)
        }
        checkZones(places, outcomes, logger: logger)
        return outcomes
    }

    /// Places whose answer came in another zone than their `timezone:` asked for (at another
    /// offset: a zone's other name is the same zone), said once until it comes right.
    private let inOtherZone = NIOLockedValueBox(Set<String>())

    /// Warns of an answer in another zone than the place's `timezone:` (a mirror or proxy that
    /// drops the parameter): Open-Meteo's days, and so the offset and the pages' times that go
    /// with them, are then that zone's.
    private func checkZones(
        _ places: [Place], _ outcomes: [Result<WeatherSnapshot, WeatherFetchError>], logger: Logger
    ) {
        for (place, outcome) in zip(places, outcomes) {
            guard let zone = place.timezone, case .success(let snapshot) = outcome,
                let moment = snapshot.current.observedAt, let rules = ZoneRules.named(zone)
            else { continue }
            let asked = rules.utcOffset(at: moment)
            let differs = asked != snapshot.utcOffsetSeconds
            let news = inOtherZone.withLockedValue { warned -> Bool in
                guard differs else {
                    warned.remove(place.name)
                    return false
                }
                return warned.insert(place.name).inserted
            }
            guard news else { continue }
            logger.warning(
                """
                open-meteo answered in another zone than the place's timezone: its days and times \
                are that zone's (a mirror or proxy that drops timezone=?)
                """,
                metadata: [
                    "location": "\(place.name)", "timezone": "\(zone)", "utc_offset_seconds": "\(asked)",
                    "answer_timezone": "\(snapshot.timezone ?? "none")",
                    "answer_utc_offset_seconds": "\(snapshot.utcOffsetSeconds)",
                ])
        }
    }

    /// The request URL for one batch of places.
    public func url(for places: [Place]) -> String {
        var query = OpenMeteoBatches.placesQuery(places)
        query.append("current=" + Self.currentVariables.joined(separator: ","))
        if forecast.hours > 0 {
            // The hourly series starts at the current hour, so one more step reaches `hours` ahead.
            query.append("hourly=" + Self.hourlyVariables.joined(separator: ","))
            query.append("forecast_hours=\(forecast.hours + 1)")
        }
        if forecast.days > 0 {
            query.append("daily=" + Self.dailyVariables.joined(separator: ","))
        }
        query.append("forecast_days=\(Self.forecastDays(for: forecast))")
        query.append("timeformat=unixtime")
        if let apiKey = batches.apiKey { query.append("apikey=" + apiKey.reveal) }
        return batches.endpoint.baseURL + "/v1/forecast?" + query.joined(separator: "&")
    }

    /// `forecast_days`: enough days to hold the hourly steps too (the API cuts hourly data at the
    /// last day). Open-Meteo weighs a request by it (`CallCost.openMeteo`).
    static func forecastDays(for forecast: ForecastSettings) -> Int {
        let daysForHours = forecast.hours > 0 ? (forecast.hours + 1 + 23) / 24 + 1 : 1
        return min(16, max(forecast.days, daysForHours))
    }

    /// A non-200 answer as its places' error, with the reason from Open-Meteo's error body.
    func httpError(_ response: HTTPResponse) -> WeatherFetchError { batches.refusal(response) }
}
