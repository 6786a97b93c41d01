import Foundation
import Logging
import NIOConcurrencyHelpers

/// Finds `city:` places through Open-Meteo's geocoding API (first match, narrowed by `country:`
/// and by text after a comma), logs the choice and the alternatives, and remembers it in
/// `<storage>/places.json` so a restart does not depend on the geocoder. A failed look-up is
/// not fatal: that place waits and retries with back-off while the others run; one that could
/// not reach the geocoder (DNS, connect, TLS) is a `.network` failure the refresher retries soon.
public final class Geocoder: @unchecked Sendable {
    struct Found: Codable, Equatable {
        var search: CitySearch
        var latitude: Double
        var longitude: Double
        var timezone: String?
        /// "Springfield, Illinois, United States": what was chosen, for the log.
        var label: String

        /// Coordinates on the globe: a state file edited by hand may hold others.
        var isOnTheGlobe: Bool { Self.isOnTheGlobe(latitude, longitude) }

        static func isOnTheGlobe(_ latitude: Double, _ longitude: Double) -> Bool {
            (-90...90).contains(latitude) && (-180...180).contains(longitude)
        }
    }

    private let lock = NIOLock()
    /// Set on a reload while feeds on other queues may be locating: a lock of its own, so a
    /// look-up under `lock` can read it.
    private let base: NIOLockedValueBox<String>
    var baseURL: String {
        get { base.withLockedValue { $0 } }
        set { base.withLockedValue { $0 = newValue } }
    }
    private let client: CurlHTTPClient
    private let recorder: UpstreamRecording
    private let logger: Logger
    private let stateFile: URL
    /// `places.json` holds a few hundred bytes a place: a bigger file is not one Cloudy wrote,
    /// and reading it whole could exhaust a pod's memory at every start.
    static let maxFileBytes = 16 << 20
    private var found: [String: Found]
    /// Places whose last look-up failed: what was searched for, when to ask again, and why. A
    /// place searched for anew (a reload fixed its `city:`) does not wait for the old search.
    private var retries: [String: (search: CitySearch, backoff: Backoff, reason: String)] = [:]
    /// Uniform in 0…1: spreads the retries of a failed look-up (a parameter so tests can pin it).
    private let jitter: @Sendable () -> Double

    public init(
        baseURL: String, storagePath: String, client: CurlHTTPClient, recorder: UpstreamRecording,
        logger: Logger, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        base = NIOLockedValueBox(baseURL)
        self.client = client
        self.recorder = recorder
        self.logger = logger
        self.jitter = jitter
        stateFile = URL(fileURLWithPath: storagePath).appendingPathComponent("places.json")
        let size = StorageFile.size(of: stateFile)
        // Read to the limit whatever the size says: a link to a device (/dev/zero) has none.
        let data =
            size.map { $0 <= Self.maxFileBytes } == true
            ? try? StorageFile.read(stateFile, atMost: Self.maxFileBytes) : nil
        if data == nil, let size {
            logger.warning(
                "cannot read the state file; city: places are looked up again",
                metadata: [
                    "file": "\(stateFile.path)",
                    "reason": "\(size > Self.maxFileBytes ? "over \(Self.maxFileBytes) bytes" : "unreadable")",
                ])
        }
        if let data {
            do {
                found = try JSONDecoder().decode([String: Found].self, from: data)
            } catch {
                logger.warning(
                    "ignoring unreadable state file",
                    metadata: ["file": "\(stateFile.path)", "error": "\(error)"])
                found = [:]
            }
        } else {
            found = [:]
        }
    }

    /// Each place with coordinates: as configured, from the state file, or looked up now.
    /// A place that cannot be located yet comes back as a failure saying why. `now` (Unix
    /// seconds) times the retries and reads `Retry-After` dates.
    public func locate(
        _ places: [Place], now: Double,
        retryInterval: Double
    ) -> [Result<Place, WeatherFetchError>] {
        places.map { place in
            guard let search = place.city else { return .success(place) }
            return lock.withLock { locate(place, search: search, now: now, retryInterval: retryInterval) }
        }
    }

    private func locate(
        _ place: Place, search: CitySearch, now: Double,
        retryInterval: Double
    ) -> Result<Place, WeatherFetchError> {
        if let known = found[place.name], known.search == search, known.isOnTheGlobe {
            return .success(located(place, known))
        }
        if let waiting = retries[place.name], waiting.search == search, now < waiting.backoff.notBefore {
            return .failure(WeatherFetchError("geocoding \(search.description): \(waiting.reason); retrying later"))
        }
        switch lookUp(search, now: now) {
        case .success(let choice):
            found[place.name] = choice
            retries[place.name] = nil
            save()
            return .success(located(place, choice))
        case .failure(let error):
            if error.cause == .network {
                // The geocoder was not reached: the refresher's retries decide when to ask again
                // (soon while the network comes up, as for a forecast), not a back-off of our own.
                retries[place.name] = nil
            } else {
                let earlier = retries[place.name].flatMap { $0.search == search ? $0.backoff : nil }
                var backoff = earlier ?? Backoff(interval: max(30, retryInterval))
                backoff.recordFailure(now: now, retryAfter: error.retryAfter, jitter: jitter())
                retries[place.name] = (search, backoff, error.message)
            }
            logger.warning(
                "city look-up failed",
                metadata: [
                    "location": "\(place.name)", "city": "\(search.description)", "reason": "\(error.message)",
                ])
            return .failure(
                WeatherFetchError(
                    "geocoding \(search.description): \(error.message)",
                    cause: error.cause == .network ? .network : .other
                ))
        }
    }

    private func located(_ place: Place, _ choice: Found) -> Place {
        var place = place
        place.latitude = choice.latitude
        place.longitude = choice.longitude
        // The zone goes into every request for the place: one Cloudy cannot send and read (a
        // state file from before this rule) would fail them all. As the config's rule.
        place.timezone = place.timezone ?? Place.knownTimeZone(choice.timezone)
        place.isLocated = true
        return place
    }

    func url(for search: CitySearch) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#,")
        var url =
            baseURL + "/v1/search?name=" + (search.query.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
            + "&count=10&language=en&format=json"
        if let country = search.country { url += "&countryCode=" + country }
        return url
    }

    private func lookUp(_ search: CitySearch, now: Double) -> Result<Found, WeatherFetchError> {
        let request = HTTPRequest(url: url(for: search), headers: [("Accept", "application/json")], timeout: 10)
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
        logger.info("city resolved", metadata: metadata)
        return .success(found)
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

    private func save() {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try StorageFile.write(encoder.encode(found), to: stateFile)
        } catch {
            logger.warning(
                "cannot remember resolved places; they will be looked up again after a restart",
                metadata: ["file": "\(stateFile.path)", "error": "\(error)"])
        }
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
