import Foundation
import Logging
import NIOConcurrencyHelpers

/// MET Norway's Locationforecast 2.0 (compact), one place per request, under its terms of
/// service: an identifying User-Agent (config requires one), coordinates rounded to four
/// decimals, no request before the last answer's `Expires`, `If-Modified-Since` with the last
/// `Last-Modified` (a 304 keeps the data and counts as success), a 203 logged once as a
/// deprecation warning. Compact has no gusts, dew point, UV, apparent temperature or
/// probabilities: those families are absent for MET places, never 0.
public final class METNorwayProvider: WeatherProvider {
    public let name = ProviderName.metNorway
    /// Its clock times `Expires`.
    let endpoint: UpstreamEndpoint
    let forecast: ForecastSettings
    let logger: Logger

    struct Cached {
        var url: String
        var snapshot: WeatherSnapshot
        var lastModified: String?
        var expires: Double
    }

    private let cache = NIOLockedValueBox([String: Cached]())
    private let warnedDeprecation = NIOLockedValueBox(false)
    private let warnedSolar = NIOLockedValueBox(Set<String>())

    public init(_ upstream: Upstream, forecast: ForecastSettings, logger: Logger) {
        endpoint = UpstreamEndpoint(provider: name, upstream: upstream)
        self.forecast = forecast
        self.logger = logger
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // MET asks for at most 20 requests a second in aggregate; a few at once stays well below.
        fetchEachPlace(places, maxInFlight: 4) { place in self.fetch(place) }
    }

    func url(for place: Place) -> String {
        "\(endpoint.baseURL)/weatherapi/locationforecast/2.0/compact?" + WeatherAPI.latitudeLongitudeQuery(place)
    }

    func fetch(_ place: Place) -> Result<WeatherSnapshot, WeatherFetchError> {
        let url = url(for: place)
        let now = endpoint.clock.now()
        let cached = cache.withLockedValue { $0[place.name] }.flatMap { $0.url == url ? $0 : nil }
        if let cached, now < cached.expires {
            return .success(cached.snapshot)  // MET asks for no request before Expires
        }
        let condition = cached?.lastModified.map { [(name: "If-Modified-Since", value: $0)] } ?? []
        let response: HTTPResponse
        switch endpoint.fetch(endpoint.request(url, headers: condition)) {
        case .failure(let error): return .failure(error)
        case .success(let answer): response = answer
        }
        let expires = response.headers["expires"].flatMap(HTTPDate.parse)?.timeIntervalSince1970 ?? now + 1800
        switch response.status {
        case 304:
            guard var kept = cached else {
                return .failure(WeatherFetchError("met-norway: 304 without an earlier answer"))
            }
            kept.expires = expires
            cache.withLockedValue { $0[place.name] = kept }
            return .success(kept.snapshot)
        case 200, 203:
            if response.status == 203,
                warnedDeprecation.withLockedValue({ warned in
                    defer { warned = true }
                    return !warned
                })
            {
                logger.warning(
                    """
                    met-norway answers 203: this product version is deprecated or beta; \
                    check api.met.no for its successor
                    """)
            }
            let outcome = Self.decode(response.body, place: place, settings: forecast, offset: utcOffset(for: place))
            if case .success(let snapshot) = outcome {
                let lastModified = response.headers["last-modified"]
                cache.withLockedValue {
                    $0[place.name] = Cached(url: url, snapshot: snapshot, lastModified: lastModified, expires: expires)
                }
            }
            return outcome
        default:
            // MET answers 403 to a User-Agent it refuses; asking again soon would not help.
            let hint = response.status == 403 ? "MET refuses this User-Agent or has blocked this client" : nil
            return .failure(
                WeatherAPI.refusal(
                    response, from: "met-norway", hint: hint, rateLimitStatuses: [429, 403],
                    now: endpoint.clock.now()))
        }
    }

    /// The place's offset from UTC at a moment: its configured zone, else (MET sends none) the
    /// solar offset its longitude suggests, in whole hours — logged once per place.
    func utcOffset(for place: Place) -> @Sendable (Double) -> Int {
        if let name = place.timezone, let zone = TimeZone(identifier: name) {
            return { zone.secondsFromGMT(for: Date(timeIntervalSince1970: $0)) }
        }
        let hours = Int((place.longitude / 15).rounded())
        if warnedSolar.withLockedValue({ $0.insert(place.name).inserted }) {
            logger.info(
                """
                met-norway sends no time zone; using the solar offset of the longitude \
                (set timezone: to override)
                """, metadata: ["location": "\(place.name)", "utc_offset_hours": "\(hours)"])
        }
        return { _ in hours * 3600 }
    }
}
