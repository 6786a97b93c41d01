import Foundation
import Logging

/// The Dark Sky forecast API as Pirate Weather serves it (`provider.name: dark-sky`): one request
/// per place, `GET <url>/forecast/<key>/<lat>,<lon>?units=si&exclude=minutely&version=2`, with
/// current conditions, 48 hourly steps (168 with `extend=hourly`, asked for `forecast.hours` of
/// 48 or more), 8 days and the alerts in one answer. The key sits in the
/// URL path, so the path is only ever shown with the key as `<redacted>`: in the debug log line
/// of each request and in every error a place reports.
public final class DarkSkyProvider: WeatherProvider {
    public let name = ProviderName.darkSky
    /// The query of every request: SI units, no minutely block (Cloudy has no minutely families).
    static let query = "?units=si&exclude=minutely&version=2"

    /// The query for `forecast`: the answer's 48 hourly steps start at the current hour, so
    /// `hour="48"` and beyond need `extend=hourly` (168 steps).
    static func query(for forecast: ForecastSettings) -> String {
        forecast.hours >= 48 ? query + "&extend=hourly" : query
    }
    let endpoint: UpstreamEndpoint
    let apiKey: Secret
    /// The key as it is written into the path (percent-encoded), scrubbed from messages too.
    let pathKey: Secret
    let forecast: ForecastSettings

    public init(_ upstream: Upstream, apiKey: Secret, forecast: ForecastSettings) {
        endpoint = UpstreamEndpoint(provider: name, upstream: upstream)
        self.apiKey = apiKey
        pathKey = Secret(Self.pathSegment(apiKey.reveal))
        self.forecast = forecast
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // Pirate Weather documents no per-second limit for forecasts (its maintainer spoke of 60
        // a minute); four at once, as for the other per-place providers, stays below it.
        fetchEachPlace(places, maxInFlight: 4) { place in self.fetch(place, logger: logger) }
    }

    /// `/forecast/<key>/<lat>,<lon>` with `key` as given: the real one for the request,
    /// `<redacted>` for what is shown.
    static func path(for place: Place, key: String) -> String {
        "/forecast/\(key)/\(WeatherAPI.coordinate(place.latitude)),\(WeatherAPI.coordinate(place.longitude))"
    }

    /// The path of `place` as logs, errors and pages show it.
    func shownPath(for place: Place) -> String { Self.path(for: place, key: "\(apiKey)") }

    func fetch(_ place: Place, logger: Logger) -> Result<WeatherSnapshot, WeatherFetchError> {
        let shown = shownPath(for: place)
        logger.debug("dark-sky request", metadata: ["location": "\(place.name)", "path": "\(shown)"])
        var request = endpoint.request(
            endpoint.baseURL + Self.path(for: place, key: pathKey.reveal) + Self.query(for: forecast))
        request.followRedirects = false  // the key must not travel to another host
        let outcome = endpoint.fetch(request) { response in
            response.status == 200
                ? Self.decode(response.body, place: place, settings: forecast) : .failure(httpError(response))
        }
        return outcome.mapError { error in
            var scrubbed = error
            scrubbed.message = pathKey.scrub(apiKey.scrub(error.message))
            // A spent month is the key's, not the place's: the quiet period that every place
            // then shows as its reason names no place's path.
            if case .quota = error.cause {} else { scrubbed.message += " (GET \(shown))" }
            return scrubbed
        }
    }

    /// A non-200 answer as its place's error. Kong's 401/403 mean a bad key; a 429 whose
    /// `RateLimit-Remaining` is 0 is the monthly quota spent: a quiet period until the key's
    /// month starts afresh, `RateLimit-Reset` seconds from now (the UTC month's turn without
    /// it; `Retry-After` when later); any other 429 is the per-second limit.
    func httpError(_ response: HTTPResponse) -> WeatherFetchError {
        let badKey = response.status == 401 || response.status == 403
        var error = WeatherAPI.refusal(
            response, from: "dark-sky", explainedBy: response.status == 400 ? .detail : .message,
            hint: badKey ? "invalid API key" : nil, keys: [apiKey, pathKey], now: endpoint.clock.now())
        if response.status == 429, response.headers["ratelimit-remaining"]?.trimmingCharacters(in: .whitespaces) == "0"
        {
            error.cause = .quota(.month)
            let now = endpoint.clock.now()
            error.windowResetsAt = response.headers["ratelimit-reset"].flatMap {
                RetryAfter.seconds($0, now: Date(timeIntervalSince1970: now))
            }.map { now + min($0, QuietPeriod.longestMonth) }
        }
        return error
    }

    /// `key` percent-encoded outside the URL's unreserved characters, so that no key can change
    /// the path's shape.
    static func pathSegment(_ key: String) -> String {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return key.addingPercentEncoding(withAllowedCharacters: unreserved) ?? key
    }
}
