import Logging

/// Deutscher Wetterdienst's warnings through Bright Sky, `GET /alerts?lat=&lon=` (no key). A
/// point outside Germany is answered 404 `{"detail":"Requested position is not covered by the
/// DWD"}`, read as no warnings.
public struct DWDWarnings: WarningSource {
    public let name = WarningSourceName.dwd
    let upstream: Upstream

    public init(_ upstream: Upstream) {
        self.upstream = upstream
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<[WeatherWarning], WeatherFetchError>] {
        fetchEachPlace(places, maxInFlight: 4) { place in fetch(place) }
    }

    func url(for place: Place) -> String {
        "\(upstream.baseURL)/alerts?" + WeatherAPI.latitudeLongitudeQuery(place)
    }

    func fetch(_ place: Place) -> Result<[WeatherWarning], WeatherFetchError> {
        get(url(for: place), from: upstream) { response in
            switch response.status {
            case 200: return decode(BrightSkyAlerts.self, response) { $0.warnings }
            case 404 where BrightSkyAlerts.isOutsideGermany(response.body): return .success([])
            default: return .failure(refusal(response, from: upstream))
            }
        }
    }
}
