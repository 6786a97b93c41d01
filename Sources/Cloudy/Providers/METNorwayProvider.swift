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

    /// The last answer per place, kept until its `Expires`, read: each refresh takes the
    /// weather at its own moment from it.
    private let cache = METNorwayCache<METForecast>(defaultLifetime: 1800)
    private let warnedDeprecation = NIOLockedValueBox(false)
    private let warnedSolar = NIOLockedValueBox(Set<String>())

    public init(_ upstream: Upstream, forecast: ForecastSettings, logger: Logger) {
        endpoint = UpstreamEndpoint(provider: name, upstream: upstream)
        self.forecast = forecast
        self.logger = logger
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // MET asks for at most 20 requests a second in aggregate; a few at once stays well below.
        // Each place as of the batch's start: its kept answer's lifetime, and the weather's moment.
        fetchEachPlace(places, maxInFlight: 4, from: endpoint.clock) { place, started in
            self.fetch(place, at: started)
        }
    }

    func url(for place: Place) -> String {
        "\(endpoint.baseURL)/weatherapi/locationforecast/2.0/compact?" + WeatherAPI.latitudeLongitudeQuery(place)
    }

    func fetch(_ place: Place, at now: Double? = nil) -> Result<WeatherSnapshot, WeatherFetchError> {
        let url = url(for: place)
        let now = now ?? endpoint.clock.now()
        // Another zone asks anew, as the other providers do (documented for every provider).
        return cache.fetch(
            place: place.name, key: url + " " + (place.timezone ?? ""), now: now,
            ask: { endpoint.fetch(endpoint.request(url, headers: $0), read: $1) }, read: read
        ).map { $0.snapshot(place: place, settings: forecast, offset: utcOffset(for: place), now: now) }
    }

    /// Any answer but a 304.
    private func read(_ response: HTTPResponse) -> Result<METForecast, WeatherFetchError> {
        switch response.status {
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
            return Self.read(response.body)
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
        if let name = place.timezone, ZoneRules.named(name) != nil {
            return ForecastTime.utcOffsets(zone: name, fixed: 0)
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
