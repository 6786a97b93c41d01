import Foundation
import Logging
import NIOConcurrencyHelpers

/// OpenWeatherMap's free endpoints: current weather (`data/2.5/weather`) and the 5-day /
/// 3-hour forecast (`data/2.5/forecast`), one place per request, metric units, key in `appid`.
/// At most one call per endpoint per place every ten minutes, counted from the start of each
/// batch (the API updates no faster and counts every call; a place's request may come a little
/// sooner than ten minutes after its last one when its turn in the last batch came late): within
/// that window a place keeps its last answer without a request.
public final class OpenWeatherMapProvider: WeatherProvider {
    public let name = ProviderName.openWeatherMap
    public static let minimumCallSpacing = 600.0
    /// Its clock times the call spacing.
    var endpoint: UpstreamEndpoint { keyed.endpoint }
    let keyed: OpenWeatherMapKeyedAPI
    let forecast: ForecastSettings
    /// One Call 3.0 (one request per place) instead of the two 2.5 endpoints.
    let oneCall: Bool

    /// A place's last good answer, with when and for which coordinates and zone (its days are
    /// counted in it) it was fetched.
    private struct RecentAnswer {
        var fetched: Double
        var latitude: Double
        var longitude: Double
        var timezone: String?
        var snapshot: WeatherSnapshot
    }

    /// Last good answer per place name.
    private let recent = NIOLockedValueBox([String: RecentAnswer]())

    public init(_ upstream: Upstream, apiKey: Secret, forecast: ForecastSettings, oneCall: Bool = false) {
        keyed = OpenWeatherMapKeyedAPI(
            endpoint: UpstreamEndpoint(provider: .openWeatherMap, upstream: upstream), apiKey: apiKey)
        self.forecast = forecast
        self.oneCall = oneCall
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // The free plan allows 60 calls a minute; four at once stays far below it.
        fetchEachPlace(places, maxInFlight: 4, from: endpoint.clock) { place, started in
            self.fetch(place, at: started)
        }
    }

    /// `place` as of `now` (the start of its batch): its last answer when it is not ten minutes
    /// old (`minimumCallSpacing`, less `FairUse.spacingTolerance`), else a call.
    func fetch(_ place: Place, at now: Double? = nil) -> Result<WeatherSnapshot, WeatherFetchError> {
        let now = now ?? endpoint.clock.now()
        if let last = recent.withLockedValue({ $0[place.name] }),
            now - last.fetched < Self.minimumCallSpacing - FairUse.spacingTolerance,
            last.latitude == place.latitude, last.longitude == place.longitude, last.timezone == place.timezone
        {
            return .success(last.snapshot)
        }
        let outcome = oneCall ? fetchOneCall(place) : fetchCurrentAndForecast(place)
        if case .success(let snapshot) = outcome {
            recent.withLockedValue {
                $0[place.name] = RecentAnswer(
                    fetched: now, latitude: place.latitude, longitude: place.longitude, timezone: place.timezone,
                    snapshot: snapshot)
            }
        }
        return outcome
    }

    private func fetchOneCall(_ place: Place) -> Result<WeatherSnapshot, WeatherFetchError> {
        // The alerts come along: they are the place's official warnings, at no extra call.
        keyed.get(Self.oneCallPath + "?" + query(place) + "&exclude=minutely") {
            Self.decode(oneCall: $0, place: place, settings: forecast)
        }
    }

    /// Each answer read as it comes: a current weather that fails or does not decode is not
    /// followed by the forecast's request. A failed place costs the calls that reached
    /// OpenWeatherMap: none when the current weather never did, one when only it did.
    private func fetchCurrentAndForecast(_ place: Place) -> Result<WeatherSnapshot, WeatherFetchError> {
        let current = keyed.get("/data/2.5/weather?" + query(place), read: Self.current)
        return current.mapError { Self.costing($0, $0.cause == .network ? 0 : 1) }.flatMap { current in
            keyed.get("/data/2.5/forecast?" + query(place)) { forecastBody in
                Self.decode(current: current, forecast: forecastBody, place: place, settings: forecast)
            }
            .mapError { $0.cause == .network ? Self.costing($0, 1) : $0 }
        }
    }

    /// `error`, costing the quota `calls` calls.
    private static func costing(_ error: WeatherFetchError, _ calls: Double) -> WeatherFetchError {
        var costed = error
        costed.calls = calls
        return costed
    }

    private func query(_ place: Place) -> String {
        WeatherAPI.latitudeLongitudeQuery(place) + "&units=metric"
    }

    func httpError(_ response: HTTPResponse) -> WeatherFetchError { keyed.httpError(response) }
}

/// How OpenWeatherMap's APIs are asked (weather and air pollution): the key in `appid`,
/// never sent to another host, blanked out of every message.
struct OpenWeatherMapKeyedAPI: Sendable {
    let endpoint: UpstreamEndpoint
    let apiKey: Secret

    /// One GET with the key: the answer's body read by `read` on 200, else a failure that names
    /// the status.
    func get<Value>(
        _ pathAndQuery: String, read: ([UInt8]) -> Result<Value, WeatherFetchError>
    ) -> Result<Value, WeatherFetchError> {
        var request = endpoint.request(endpoint.baseURL + pathAndQuery + "&appid=" + apiKey.reveal)
        request.followRedirects = false  // the key must not travel to another host
        let outcome = endpoint.fetch(request) { response in
            response.status == 200 ? read(response.body) : .failure(httpError(response))
        }
        return outcome.mapError { error in
            var scrubbed = error
            scrubbed.message = apiKey.scrub(error.message)
            return scrubbed
        }
    }

    /// A non-200 answer as its place's error: a 401 names the key (never its value), others
    /// carry the `message` of OpenWeatherMap's error body with the key blanked out.
    func httpError(_ response: HTTPResponse) -> WeatherFetchError {
        if response.status == 401 {
            return WeatherFetchError("\(endpoint.name): invalid API key (HTTP 401)")
        }
        return WeatherAPI.refusal(
            response, from: endpoint.name, explainedBy: .message, keys: [apiKey], now: endpoint.clock.now())
    }
}
