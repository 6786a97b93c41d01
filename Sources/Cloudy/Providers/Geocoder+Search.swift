import Foundation
import Logging

/// One look-up: the request to Open-Meteo's geocoding API, and the choice among its answers.
extension Geocoder {
    func url(for search: CitySearch) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#,")
        var url =
            baseURL + "/v1/search?name=" + (search.query.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
            + "&count=10&language=en&format=json"
        if let country = search.country { url += "&countryCode=" + country }
        return url
    }

    /// What a look-up found, and the log line that says so once it is kept (`Geocoder.settle`):
    /// a look-up a reload made stale is not logged as the place's choice.
    struct Resolved {
        var found: Found
        var metadata: Logger.Metadata
    }

    /// Asks the geocoder for `search`, within `refresh.timeout` like any upstream request, and
    /// gives up as soon as `isMoot` says the answer would not be kept.
    func lookUp(
        _ search: CitySearch, now: Double, isMoot: @escaping @Sendable () -> Bool
    ) -> Result<Resolved, WeatherFetchError> {
        var request = HTTPRequest(
            url: url(for: search), headers: [("Accept", "application/json")], timeout: timeout)
        request.isMoot = isMoot
        let answer = client.fetch(request, countedAs: "geocoding", by: recorder) {
            response -> Result<GeocodingAnswer, WeatherFetchError> in
            guard response.status == 200 else {
                // The message gets its "geocoding <city>: " prefix where the place's error is made.
                return .failure(WeatherAPI.refusal(response, from: nil, now: now))
            }
            return WeatherAPI.decode(GeocodingAnswer.self, from: response.body, as: "answer")
        }
        let results: [GeocodingResult]
        switch answer {
        case .success(let answer): results = answer.results ?? []
        case .failure(let error): return .failure(error)
        }
        let matches = Self.narrow(results, search)
        guard let choice = matches.first, let latitude = choice.latitude, let longitude = choice.longitude,
            Found.isOnTheGlobe(latitude, longitude)
        else {
            return .failure(WeatherFetchError("no place matches"))
        }
        let alternatives = matches.dropFirst().prefix(4).map {
            "\($0.label) (\($0.latitude ?? 0), \($0.longitude ?? 0))"
        }
        let found = Found(
            search: search, latitude: latitude, longitude: longitude, timezone: Place.knownTimeZone(choice.timezone),
            label: choice.label)
        var metadata: Logger.Metadata = [
            "city": "\(search.description)", "chosen": "\(choice.label)", "latitude": "\(latitude)",
            "longitude": "\(longitude)",
            "timezone": "\(found.timezone ?? "")", "alternatives": "\(alternatives.joined(separator: "; "))",
        ]
        if let ignored = choice.timezone, found.timezone == nil {
            metadata["ignored_timezone"] = "\(ignored)"
        }
        return .success(Resolved(found: found, metadata: metadata))
    }

    /// Results in the geocoder's order, keeping only those in `country` and, when the query has
    /// text after a comma, those whose country, country code or region matches it (if any do).
    static func narrow(_ results: [GeocodingResult], _ search: CitySearch) -> [GeocodingResult] {
        var matches = results
        if let country = search.country {
            matches = matches.filter { $0.country_code?.uppercased() == country.uppercased() }
        }
        if let comma = search.query.firstIndex(of: ",") {
            let qualifier = search.query[search.query.index(after: comma)...].trimmingCharacters(in: .whitespaces)
                .lowercased()
            let qualified = matches.filter { result in
                [result.country, result.country_code, result.admin1].compactMap { $0?.lowercased() }.contains(qualifier)
            }
            if !qualified.isEmpty { matches = qualified }
        }
        return matches
    }
}

struct GeocodingAnswer: Decodable {
    let results: [GeocodingResult]?
}

// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct GeocodingResult: Decodable {
    let name: String?
    let latitude: Double?
    let longitude: Double?
    let country_code: String?
    let country: String?
    let admin1: String?
    let timezone: String?

    var label: String { [name, admin1, country].compactMap { $0 }.joined(separator: ", ") }
}
