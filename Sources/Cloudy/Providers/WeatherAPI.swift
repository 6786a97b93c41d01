import Foundation

/// What every weather API client here does the same way: how coordinates are written into a
/// request, how a refusal (status, `Retry-After`, error body) becomes the error a place reports,
/// how an answer that does not decode or lacks a section is reported, and which UTC offsets an
/// answer may claim. Answers are untrusted: nothing here traps on what a server sends.
enum WeatherAPI {
    /// A coordinate with at most four decimals, no trailing zeros and no `-0`.
    static func coordinate(_ value: Double) -> String {
        // Four decimals (~11 m) is finer than any model grid and keeps URLs cache-friendly.
        let scaled = (value * 10_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int(abs(scaled))
        let fraction = String(magnitude % 10_000).leftPadded(to: 4)
        var text = "\(sign)\(magnitude / 10_000).\(fraction)"
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `lat=…&lon=…`, the query of the APIs that take one place per request.
    static func latitudeLongitudeQuery(_ place: Place) -> String {
        "lat=\(coordinate(place.latitude))&lon=\(coordinate(place.longitude))"
    }

    /// The field of a JSON error body that says why a request was refused.
    enum ErrorBodyField {
        /// `{"error": true, "reason": "…"}` (Open-Meteo).
        case reason
        /// `{"cod": 429, "message": "…"}` (OpenWeatherMap; `cod` is a number or a string).
        case message
        /// `{"detail": "…"}` (FastAPI, behind Pirate Weather's gateway).
        case detail
    }

    /// A non-200 answer as the error its places report: `<source>: HTTP <status>`, then
    /// `: <explanation>` from the body's `field` (at most 200 characters), then ` (<hint>)`.
    /// `Retry-After` is read as of `now`; a status in `rateLimitStatuses` stops the refresh's
    /// other requests to the same provider. `keys` (the key, and its form in a URL) are blanked out
    /// of the message, the explanation before it is cut, so no part of a key survives the cut.
    /// A 429 whose explanation is a quota text (`quotaWindow`) has the cause `.quota`, a 400 the
    /// cause `.badRequest`.
    static func refusal(
        _ response: HTTPResponse, from source: String?, explainedBy field: ErrorBodyField? = nil,
        hint: String? = nil, rateLimitStatuses: Set<Int> = [429], keys: [Secret] = [],
        now: Double
    ) -> WeatherFetchError {
        func scrubbed(_ text: String) -> String { keys.reduce(text) { $1.scrub($0) } }
        var message = (source.map { $0 + ": " } ?? "") + "HTTP \(response.status)"
        let explained = field.flatMap { explanation(in: response.body, field: $0) }.map(scrubbed)
        if let explained { message += ": " + String(explained.prefix(200)) }
        if let hint { message += " (\(hint))" }
        let retryAfter = response.headers["retry-after"].flatMap {
            RetryAfter.seconds($0, now: Date(timeIntervalSince1970: now))
        }
        var cause = WeatherFetchError.Cause.other
        if response.status == 400 {
            cause = .badRequest
        } else if response.status == 429, let explained, let window = quotaWindow(explained) {
            cause = .quota(window)
        }
        return WeatherFetchError(
            scrubbed(message), retryAfter: retryAfter,
            isRateLimit: rateLimitStatuses.contains(response.status), cause: cause)
    }

    /// The providers' quota refusals, as their 429 bodies say them (the shared reference on weather
    /// APIs, §1.7 and §2.5), with the window each names: Open-Meteo's server has exactly these three
    /// (a monthly one is on its pricing page but in no answer); OpenWeatherMap's block names none.
    static let quotaTexts: [(text: String, window: QuotaWindow?)] = [
        ("minutely api request limit exceeded", .minute),
        ("hourly api request limit exceeded", .hour),
        ("daily api request limit exceeded", .day),
        ("account is temporary blocked", nil),
    ]

    /// `.some(window)` when `explanation` is a quota refusal (the window nil when it names none),
    /// nil when it is not one (e.g. Open-Meteo's "Too many concurrent requests").
    static func quotaWindow(_ explanation: String) -> QuotaWindow?? {
        let text = explanation.lowercased()
        return quotaTexts.first { text.contains($0.text) }.map { $0.window }
    }

    private struct ReasonBody: Decodable { let reason: String? }
    private struct MessageBody: Decodable { let message: String? }
    private struct DetailBody: Decodable { let detail: String? }

    private static func explanation(in body: [UInt8], field: ErrorBodyField) -> String? {
        let decoder = JSONDecoder()
        switch field {
        case .reason: return (try? decoder.decode(ReasonBody.self, from: Data(body)))?.reason
        case .message: return (try? decoder.decode(MessageBody.self, from: Data(body)))?.message
        case .detail: return (try? decoder.decode(DetailBody.self, from: Data(body)))?.detail
        }
    }

    /// `body` decoded as `T`, or the error `<what> is not valid: <why>`.
    static func decode<T: Decodable>(
        _ type: T.Type, from body: [UInt8],
        as what: String
    ) -> Result<T, WeatherFetchError> {
        do {
            return .success(try JSONDecoder().decode(type, from: Data(body)))
        } catch {
            return .failure(WeatherFetchError("\(what) is not valid: \(describe(error))"))
        }
    }

    /// A decoding error in one line: where in the answer, and what was wrong there.
    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "\(path): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): return "missing key \(key.stringValue)"
        default: return "\(error)"
        }
    }

    /// The answer's current section (nil when it has none) if the answer has every section the
    /// settings need: the current one always, the hourly one for hours > 0, the daily one for
    /// days > 0. Else the error `<answer> lacks the <section> section` for the first it lacks.
    static func requireSections<Current>(
        of answer: String, current: Current?, hourly: Bool, daily: Bool,
        settings: ForecastSettings
    ) -> Result<Current, WeatherFetchError> {
        func lacking(_ section: String) -> Result<Current, WeatherFetchError> {
            .failure(WeatherFetchError("\(answer) lacks the \(section) section"))
        }
        guard let current else { return lacking("current") }
        if settings.hours > 0, !hourly { return lacking("hourly") }
        if settings.days > 0, !daily { return lacking("daily") }
        return .success(current)
    }

    /// An answer's UTC offset in seconds when a place can have it (within ±18 hours), else 0.
    static func plausibleOffset(_ seconds: Int?) -> Int {
        guard let seconds, (-18 * 3600...18 * 3600).contains(seconds) else { return 0 }
        return seconds
    }
}
