import Logging

/// MET Norway's MetAlerts 2.0 (GeoJSON, English texts) for a point, under MET's terms as
/// `METNorwayProvider` follows them: an identifying User-Agent (the config requires one for
/// this source), coordinates rounded to four decimals, no request before the last answer's
/// `Expires`, and `If-Modified-Since` with the last `Last-Modified` (a 304 keeps the list and
/// counts as success). A point outside Norway's areas gets an empty list (or a 422 page, read
/// the same way; a 422 in JSON is another server's, such as a FastAPI one behind a wrong `url:`).
public final class METNorwayWarnings: WarningSource {
    public let name = WarningSourceName.metNorway
    let upstream: Upstream
    let logger: Logger

    /// The last answer per place, kept until its `Expires`, and at least ten minutes (MET asks
    /// for alerts no more often).
    private let cache = METNorwayCache<[WeatherWarning]>(defaultLifetime: 600, minimumLifetime: 600)

    public init(_ upstream: Upstream, logger: Logger) {
        self.upstream = upstream
        self.logger = logger
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<[WeatherWarning], WeatherFetchError>] {
        // MET calls the GeoJSON output "slow and costly to produce": two at once.
        fetchEachPlace(places, maxInFlight: 2, from: upstream.clock) { place, started in
            self.fetch(place, at: started)
        }
    }

    func url(for place: Place) -> String {
        "\(upstream.baseURL)/weatherapi/metalerts/2.0/current.json?"
            + WeatherAPI.latitudeLongitudeQuery(place) + "&lang=en"
    }

    func fetch(_ place: Place, at now: Double? = nil) -> Result<[WeatherWarning], WeatherFetchError> {
        let url = url(for: place)
        return cache.fetch(
            place: place.name, key: url, now: now ?? upstream.clock.now(),
            ask: { get(url, from: upstream, headers: $0, read: $1) },
            read: read)
    }

    /// Any answer but a 304.
    func read(_ response: HTTPResponse) -> Result<[WeatherWarning], WeatherFetchError> {
        switch response.status {
        case 200, 203:
            return decode(METAlerts.self, response) { $0.warnings }
        case 422 where !(response.mediaType ?? "").hasSuffix("json"):
            return .success([])  // MET's answer (an HTML or text page) for a point outside its areas
        default:
            let hint = response.status == 403 ? "MET refuses this User-Agent or has blocked this client" : nil
            return .failure(refusal(response, from: upstream, hint: hint))
        }
    }
}
