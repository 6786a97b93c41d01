import NIOConcurrencyHelpers

/// MET Norway's caching terms, for each of its products Cloudy reads (the forecast and the
/// warnings), per place: no request before the last answer's `Expires` (the kept value is the
/// answer), then `If-Modified-Since` with the last `Last-Modified`; a 304 keeps the value and
/// counts as success. An answer without `Expires` is kept for `defaultLifetime` seconds; none is
/// kept shorter than `minimumLifetime` (MetAlerts' ten minutes) nor longer than `maxLifetime`
/// (MET's own are about 30 minutes: a later one, from a cache gone wrong, would freeze the
/// place's weather or warnings while they count as fresh). A place
/// asked for another value (its `key`: other coordinates, another URL; a forecast's other zone)
/// starts afresh.
final class METNorwayCache<Value: Sendable>: Sendable {
    private struct Entry {
        var key: String
        var value: Value
        var lastModified: String?
        var expires: Double
    }

    private let entries = NIOLockedValueBox([String: Entry]())
    let defaultLifetime: Double
    /// The least time an answer is kept, whatever its `Expires` says: MetAlerts asks for one
    /// poll per ten minutes at most, however soon its answers expire.
    let minimumLifetime: Double
    static var maxLifetime: Double { 3600 }

    init(defaultLifetime: Double, minimumLifetime: Double = 0) {
        self.defaultLifetime = defaultLifetime
        self.minimumLifetime = minimumLifetime
    }

    /// The value for `place` at `now`: kept, or asked for with `ask`, given the conditional
    /// headers to send and how to read the answer (`answered`, which calls `read`).
    func fetch(
        place: String, key: String, now: Double,
        ask: ([(name: String, value: String)], Reader) -> Result<Value, WeatherFetchError>,
        read: Reader
    ) -> Result<Value, WeatherFetchError> {
        let cached = entries.withLockedValue { $0[place] }.flatMap { $0.key == key ? $0 : nil }
        if let cached, now < cached.expires {
            return .success(cached.value)  // MET asks for no request before Expires
        }
        let condition = cached?.lastModified.map { [(name: "If-Modified-Since", value: $0)] } ?? []
        // `read` runs only inside `ask`, before it returns.
        return withoutActuallyEscaping(read) { read in
            ask(condition) { answered($0, read: read, cached: cached, place: place, key: key, now: now) }
        }
    }

    /// What an answer makes of the value: a 304 keeps `cached` (until the new `Expires`); any
    /// other answer is `read`, and a 200 or 203 read successfully is kept.
    private func answered(
        _ response: HTTPResponse, read: Reader, cached: Entry?, place: String, key: String, now: Double
    ) -> Result<Value, WeatherFetchError> {
        // The lifetimes Cloudy sets count from the batch's start (`now`), less
        // `FairUse.spacingTolerance`: a refresh due that long after it, which may start a moment
        // sooner, asks.
        let lifetime = { (seconds: Double) in now + seconds - FairUse.spacingTolerance }
        let expires = max(
            min(
                response.headers["expires"].flatMap(HTTPDate.parse)?.timeIntervalSince1970 ?? lifetime(defaultLifetime),
                now + Self.maxLifetime),
            minimumLifetime > 0 ? lifetime(minimumLifetime) : now)
        if response.status == 304 {
            guard var kept = cached else {
                return .failure(WeatherFetchError("met-norway: 304 without an earlier answer"))
            }
            kept.expires = expires
            entries.withLockedValue { $0[place] = kept }
            return .success(kept.value)
        }
        let outcome = read(response)
        if response.status == 200 || response.status == 203, case .success(let value) = outcome {
            let entry = Entry(key: key, value: value, lastModified: response.headers["last-modified"], expires: expires)
            entries.withLockedValue { $0[place] = entry }
        }
        return outcome
    }

    /// An answer made the cached value, or the failure it is.
    typealias Reader = (HTTPResponse) -> Result<Value, WeatherFetchError>
}
