import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Open-Meteo's forecast API (the default provider, no key). Many places go in one request
/// (comma-separated coordinates; the answer is then a JSON array in request order), at most
/// `placesPerRequest` per request. Against the public host requests run one after another: the
/// free tier runs one request per client at a time and refuses more than a few in flight; a
/// self-hosted or commercial host gets up to `parallelRequests` at once (`refresh.parallel_requests`).
public final class OpenMeteoProvider: WeatherProvider {
    public let name = ProviderName.openMeteo
    /// Its clock reads `Retry-After` dates.
    let endpoint: UpstreamEndpoint
    let forecast: ForecastSettings
    /// Keeps the URL near 3 KB and each answer a few hundred KB, far inside the API's limits.
    public let placesPerRequest: Int
    /// The commercial hosts' key, sent as `apikey` to `baseURL` only (redirects are not followed then).
    let apiKey: Secret?
    /// Most requests in flight at once.
    public let parallelRequests: Int

    public init(
        _ upstream: Upstream, forecast: ForecastSettings, apiKey: Secret? = nil, placesPerRequest: Int = 100,
        parallelRequests: Int = 1
    ) {
        endpoint = UpstreamEndpoint(provider: name, upstream: upstream)
        self.forecast = forecast
        self.apiKey = apiKey
        self.placesPerRequest = placesPerRequest
        self.parallelRequests = max(1, parallelRequests)
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
        // One request at a time against the public host, each answer decoded on `decoding` while
        // the next request is on the wire, so a refresh costs the requests' round trips plus one
        // decode. Up to `parallelRequests` at once against any other.
        let batches = stride(from: 0, to: places.count, by: placesPerRequest).map {
            Array(places[$0..<min($0 + placesPerRequest, places.count)])
        }
        let decodedOutcomes = NIOLockedValueBox(
            [[Result<WeatherSnapshot, WeatherFetchError>]](repeating: [], count: batches.count))
        let decoding = DispatchQueue(label: "cloudy.open-meteo.decode")
        let decoded = DispatchGroup()
        // Each batch's outcomes, or nil while its answer waits on `decoding`.
        let ask: @Sendable ((offset: Int, element: [Place])) -> [Result<WeatherSnapshot, WeatherFetchError>]? = {
            numbered in
            let (index, batch) = numbered
            switch self.request(batch, logger: logger) {
            case .answered(let response) where self.parallelRequests > 1:
                // Answers arrive together: each is decoded on the thread that asked, side by side.
                return self.decodeBatch(response, places: batch)
            case .answered(let response):
                decoding.async(group: decoded) {
                    let results = self.decodeBatch(response, places: batch)
                    decodedOutcomes.withLockedValue { $0[index] = results }
                }
                return nil
            case .failed(let results):
                return results
            }
        }
        let outcomes = fetchEach(
            Array(batches.enumerated()), maxInFlight: parallelRequests,
            refusal: { failed in
                // A rate limit covers every request: the batches not sent yet wait too.
                guard case .failure(let error)? = failed?.first, error.isRateLimit else { return nil }
                return error
            },
            skipped: { numbered, error in
                let skipped = error.notAsked("open-meteo: not asked: the provider asked to wait (\(error.message))")
                return Array(repeating: .failure(skipped), count: numbered.element.count)
            }, ask)
        decoded.wait()
        let answers = decodedOutcomes.withLockedValue { $0 }
        return outcomes.indices.flatMap { outcomes[$0] ?? answers[$0] }
    }

    /// The request URL for one batch of places.
    public func url(for places: [Place]) -> String {
        var query = [
            "latitude=" + places.map { WeatherAPI.coordinate($0.latitude) }.joined(separator: ","),
            "longitude=" + places.map { WeatherAPI.coordinate($0.longitude) }.joined(separator: ","),
            "current=" + Self.currentVariables.joined(separator: ","),
        ]
        if forecast.hours > 0 {
            // The hourly series starts at the current hour, so one more step reaches `hours` ahead.
            query.append("hourly=" + Self.hourlyVariables.joined(separator: ","))
            query.append("forecast_hours=\(forecast.hours + 1)")
        }
        if forecast.days > 0 {
            query.append("daily=" + Self.dailyVariables.joined(separator: ","))
        }
        query.append("forecast_days=\(Self.forecastDays(for: forecast))")
        let zones = places.map { $0.timezone ?? "auto" }
        query.append("timezone=" + (Set(zones) == ["auto"] ? "auto" : zones.joined(separator: ",")))
        query.append("timeformat=unixtime")
        if let apiKey { query.append("apikey=" + apiKey.reveal) }
        return endpoint.baseURL + "/v1/forecast?" + query.joined(separator: "&")
    }

    /// `forecast_days`: enough days to hold the hourly steps too (the API cuts hourly data at the
    /// last day). Open-Meteo weighs a request by it (`CallCost.openMeteo`).
    static func forecastDays(for forecast: ForecastSettings) -> Int {
        let daysForHours = forecast.hours > 0 ? (forecast.hours + 1 + 23) / 24 + 1 : 1
        return min(16, max(forecast.days, daysForHours))
    }

    private enum BatchAnswer {
        case answered(HTTPResponse)
        case failed([Result<WeatherSnapshot, WeatherFetchError>])
    }

    /// One request for a batch: a 200 to decode, or every place's failure.
    private func request(_ places: [Place], logger: Logger) -> BatchAnswer {
        var request = endpoint.request(url(for: places))
        request.followRedirects = apiKey == nil
        logger.debug("open-meteo request", metadata: ["places": "\(places.count)"])
        var failure: WeatherFetchError
        let outcome = endpoint.client.fetch(request)
        // A 200, or no answer (a timeout: the server may have done the work), costs the weight
        // of every place asked; Open-Meteo counts a request it answered with an error as one call.
        let weight = Double(places.count) * CallCost.openMeteo(forecast)
        switch outcome {
        case .success(let response) where response.status == 200:
            endpoint.recordCalls(weight, for: outcome)
            return .answered(response)
        case .failure(let error):
            endpoint.recordCalls(weight, for: outcome)
            endpoint.recorder.recordUpstream(provider: name, code: error.kind.rawValue)
            failure = .unanswered("open-meteo", error)
        case .success(let response):
            endpoint.recordCalls(1, for: outcome)
            endpoint.recorder.recordUpstream(provider: name, code: String(response.status))
            failure = httpError(response)
            failure.calls = 1 / Double(places.count)
        }
        return .failed(Array(repeating: .failure(scrubbed(failure)), count: places.count))
    }

    private func decodeBatch(
        _ response: HTTPResponse,
        places: [Place]
    ) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        let outcomes = Self.decode(response.body, places: places, forecast: forecast)
        // A 200 that decodes for no place at all is counted as a decode failure.
        let decoded = outcomes.contains { if case .success = $0 { return true } else { return false } }
        endpoint.recorder.recordUpstream(provider: name, code: decoded ? "200" : "decode")
        return outcomes.map { $0.mapError(scrubbed) }
    }

    /// An error message with the API key (if any) blanked out.
    private func scrubbed(_ error: WeatherFetchError) -> WeatherFetchError {
        guard let apiKey else { return error }
        var scrubbed = error
        scrubbed.message = apiKey.scrub(error.message)
        return scrubbed
    }

    /// A non-200 answer as its places' error, with the reason from Open-Meteo's error body.
    func httpError(_ response: HTTPResponse) -> WeatherFetchError {
        WeatherAPI.refusal(response, from: "open-meteo", explainedBy: .reason, now: endpoint.clock.now())
    }
}
