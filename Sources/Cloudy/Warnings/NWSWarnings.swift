import Logging

/// The US National Weather Service's active alerts for a point, `GET /alerts/active?point=lat,lon`
/// (GeoJSON). The service asks for no more than one request per 30 s per point and refuses a
/// request without a User-Agent (403). Its answer for a point outside its area is not
/// documented: an empty list most likely, a 400 or 404 problem document possibly; all are read
/// as no warnings, not failures (a border town in the generous box). Any other 400 or 404 is
/// a failure: the service's own "is not a valid resource path" (a wrong path on
/// api.weather.gov) or another server's page.
public struct NWSWarnings: WarningSource {
    public let name = WarningSourceName.nws
    let upstream: Upstream

    public init(_ upstream: Upstream) {
        self.upstream = upstream
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<[WeatherWarning], WeatherFetchError>] {
        // The service's limits are "generous" but not public: a few at once.
        fetchEachPlace(places, maxInFlight: 2) { place in fetch(place) }
    }

    func url(for place: Place) -> String {
        let point = WeatherAPI.coordinate(place.latitude) + "," + WeatherAPI.coordinate(place.longitude)
        return "\(upstream.baseURL)/alerts/active?point=\(point)"
    }

    func fetch(_ place: Place) -> Result<[WeatherWarning], WeatherFetchError> {
        get(url(for: place), from: upstream, accept: "application/geo+json") { response in
            switch response.status {
            case 200: return decode(NWSAlerts.self, response) { $0.warnings }
            case 400, 404: return readNoCoverage(response)
            case 403: return .failure(refusal(response, from: upstream, hint: "NWS refuses this User-Agent"))
            default: return .failure(refusal(response, from: upstream))
            }
        }
    }

    /// A 400 or 404: a point outside its area when it is the service's problem document, a
    /// failure when that document says the path is none of the service's or another server
    /// answered.
    func readNoCoverage(_ response: HTTPResponse) -> Result<[WeatherWarning], WeatherFetchError> {
        guard let problem = NWSProblem.of(response) else { return .failure(refusal(response, from: upstream)) }
        guard !problem.isUnknownPath else {
            return .failure(refusal(response, from: upstream, explainedBy: .detail, hint: "check the source's url:"))
        }
        return .success([])
    }
}
