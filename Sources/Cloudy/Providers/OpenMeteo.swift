import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Open-Meteo's forecast API (the default provider, no key). Many places go in one request
/// (comma-separated coordinates; the answer is then a JSON array in request order), at most
/// `placesPerRequest` per request, and requests run one after another: the free tier runs one
/// request per client at a time and refuses more than a few in flight.
public final class OpenMeteoProvider: WeatherProvider {
    public let name = ProviderName.openMeteo
    let baseURL: String
    let forecast: ForecastSettings
    let timeout: Double
    let client: CurlHTTPClient
    let recorder: UpstreamRecording
    /// Keeps the URL near 3 KB and each answer a few hundred KB, far inside the API's limits.
    public let placesPerRequest: Int
    /// The commercial hosts' key, sent as `apikey` to `baseURL` only (redirects are not followed then).
    let apiKey: Secret?

    public init(baseURL: String, forecast: ForecastSettings, timeout: Double, client: CurlHTTPClient,
                recorder: UpstreamRecording, apiKey: Secret? = nil, placesPerRequest: Int = 100) {
        self.baseURL = baseURL
        self.forecast = forecast
        self.timeout = timeout
        self.client = client
        self.recorder = recorder
        self.apiKey = apiKey
        self.placesPerRequest = placesPerRequest
    }

    static let currentVariables = [
        "temperature_2m", "relative_humidity_2m", "apparent_temperature", "dew_point_2m", "is_day", "precipitation",
        "weather_code", "cloud_cover", "pressure_msl", "wind_speed_10m", "wind_direction_10m", "wind_gusts_10m",
        "uv_index", "visibility",
    ]
    static let hourlyVariables = ["temperature_2m", "precipitation_probability", "precipitation", "wind_speed_10m", "weather_code"]
    static let dailyVariables = [
        "weather_code", "temperature_2m_max", "temperature_2m_min", "sunrise", "sunset", "uv_index_max", "precipitation_sum",
        "precipitation_probability_max", "wind_speed_10m_max", "wind_gusts_10m_max",
    ]

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // Requests run one after another; each answer is decoded on `decoding` while the next
        // request is on the wire, so a refresh costs the requests' round trips plus one decode.
        let batches = stride(from: 0, to: places.count, by: placesPerRequest).map {
            Array(places[$0..<min($0 + placesPerRequest, places.count)])
        }
        let outcomes = NIOLockedValueBox([[Result<WeatherSnapshot, WeatherFetchError>]](repeating: [], count: batches.count))
        let decoding = DispatchQueue(label: "cloudy.open-meteo.decode")
        let decoded = DispatchGroup()
        requests: for (index, batch) in batches.enumerated() {
            switch request(batch, logger: logger) {
            case let .answered(response):
                decoding.async(group: decoded) {
                    let results = self.decodeBatch(response, places: batch)
                    outcomes.withLockedValue { $0[index] = results }
                }
            case let .failed(results):
                outcomes.withLockedValue { $0[index] = results }
                // A rate limit covers every request: the rest of this refresh waits too.
                if case let .failure(error)? = results.first, error.isRateLimit {
                    let skipped = WeatherFetchError("open-meteo: not asked: the provider asked to wait (\(error.message))",
                                                    retryAfter: error.retryAfter, isRateLimit: true)
                    outcomes.withLockedValue {
                        for later in batches.indices where later > index {
                            $0[later] = Array(repeating: .failure(skipped), count: batches[later].count)
                        }
                    }
                    break requests
                }
            }
        }
        decoded.wait()
        return outcomes.withLockedValue { $0.flatMap { $0 } }
    }

    /// The request URL for one batch of places.
    public func url(for places: [Place]) -> String {
        func coordinate(_ value: Double) -> String { OpenMeteoProvider.coordinate(value) }
        var query = [
            "latitude=" + places.map { coordinate($0.latitude) }.joined(separator: ","),
            "longitude=" + places.map { coordinate($0.longitude) }.joined(separator: ","),
            "current=" + Self.currentVariables.joined(separator: ","),
        ]
        if forecast.hours > 0 {
            // The hourly series starts at the current hour, so one more step reaches `hours` ahead.
            query.append("hourly=" + Self.hourlyVariables.joined(separator: ","))
            query.append("forecast_hours=\(forecast.hours + 1)")
        }
        if forecast.days > 0 {
            query.append("daily=" + Self.dailyVariables.joined(separator: ","))
        }
        // Enough days to hold the hourly steps too (the API cuts hourly data at the last day).
        let daysForHours = forecast.hours > 0 ? (forecast.hours + 1 + 23) / 24 + 1 : 1
        query.append("forecast_days=\(min(16, max(forecast.days, daysForHours)))")
        let zones = places.map { $0.timezone ?? "auto" }
        query.append("timezone=" + (Set(zones) == ["auto"] ? "auto" : zones.joined(separator: ",")))
        query.append("timeformat=unixtime")
        if let apiKey { query.append("apikey=" + apiKey.reveal) }
        return baseURL + "/v1/forecast?" + query.joined(separator: "&")
    }

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

    private enum BatchAnswer {
        case answered(HTTPResponse)
        case failed([Result<WeatherSnapshot, WeatherFetchError>])
    }

    /// One request for a batch: a 200 to decode, or every place's failure.
    private func request(_ places: [Place], logger: Logger) -> BatchAnswer {
        var request = HTTPRequest(url: url(for: places), headers: [("Accept", "application/json")], timeout: timeout)
        request.followRedirects = apiKey == nil
        logger.debug("open-meteo request", metadata: ["places": "\(places.count)"])
        let failure: WeatherFetchError
        switch client.fetch(request) {
        case let .success(response) where response.status == 200:
            return .answered(response)
        case let .failure(error):
            recorder.recordUpstream(provider: name, code: error.kind.rawValue)
            failure = WeatherFetchError("open-meteo: \(error.message) (\(error.kind.rawValue))")
        case let .success(response):
            recorder.recordUpstream(provider: name, code: String(response.status))
            failure = Self.httpError(response)
        }
        return .failed(Array(repeating: .failure(scrubbed(failure)), count: places.count))
    }

    private func decodeBatch(_ response: HTTPResponse, places: [Place]) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        let outcomes = Self.decode(response.body, places: places, forecast: forecast)
        // A 200 that decodes for no place at all is counted as a decode failure.
        let decoded = outcomes.contains { if case .success = $0 { return true } else { return false } }
        recorder.recordUpstream(provider: name, code: decoded ? "200" : "decode")
        return outcomes.map { $0.mapError(scrubbed) }
    }

    /// An error message with the API key (if any) blanked out.
    private func scrubbed(_ error: WeatherFetchError) -> WeatherFetchError {
        guard let apiKey else { return error }
        return WeatherFetchError(apiKey.scrub(error.message), retryAfter: error.retryAfter, isRateLimit: error.isRateLimit)
    }

    static func httpError(_ response: HTTPResponse) -> WeatherFetchError {
        var message = "open-meteo: HTTP \(response.status)"
        if let body = try? JSONDecoder().decode(OpenMeteoErrorBody.self, from: Data(response.body)), let reason = body.reason {
            message += ": " + String(reason.prefix(200))
        }
        return WeatherFetchError(message, retryAfter: response.headers["retry-after"].flatMap { RetryAfter.seconds($0) },
                                 isRateLimit: response.status == 429)
    }

    /// Decodes an answer for `places` (an object for one place, an array in request order for
    /// several). A place whose entry is broken or lacks a section fails alone; an array of the
    /// wrong length fails the whole batch, since entries can no longer be matched to places.
    public static func decode(_ body: [UInt8], places: [Place], forecast: ForecastSettings) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        func failAll(_ message: String) -> [Result<WeatherSnapshot, WeatherFetchError>] {
            Array(repeating: .failure(WeatherFetchError("open-meteo: " + message)), count: places.count)
        }
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else {
            return failAll("empty answer")
        }
        let decoder = JSONDecoder()
        let data = Data(body)
        let entries: [Result<OpenMeteoForecast, WeatherFetchError>]
        do {
            switch first {
            case UInt8(ascii: "["):
                entries = try decoder.decode([Entry].self, from: data).map(\.result)
            case UInt8(ascii: "{"):
                entries = [try decoder.decode(Entry.self, from: data).result]
            default:
                return failAll("answer is not JSON (starts with \(String(UnicodeScalar(first)).debugDescription))")
            }
        } catch {
            return failAll("answer is not valid JSON: \(Self.describe(error))")
        }
        guard entries.count == places.count else {
            return failAll("answer has \(entries.count) entries for \(places.count) places")
        }
        return zip(entries, places).map { entry, _ in
            entry.flatMap { snapshot(from: $0, forecast: forecast) }
        }
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case let DecodingError.dataCorrupted(context): return context.debugDescription
        case let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "\(path): \(context.debugDescription)"
        case let DecodingError.keyNotFound(key, _): return "missing key \(key.stringValue)"
        default: return "\(error)"
        }
    }

    /// One element of a several-place answer, decoded on its own so a bad one spoils only its place.
    struct Entry: Decodable {
        let result: Result<OpenMeteoForecast, WeatherFetchError>
        init(from decoder: Decoder) throws {
            do {
                result = .success(try OpenMeteoForecast(from: decoder))
            } catch {
                result = .failure(WeatherFetchError("open-meteo: bad entry: \(OpenMeteoProvider.describe(error))"))
            }
        }
    }

    static func snapshot(from answer: OpenMeteoForecast, forecast: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        if let reason = answer.reason, answer.error == true {
            return .failure(WeatherFetchError("open-meteo: " + String(reason.prefix(200))))
        }
        guard let current = answer.current else { return .failure(WeatherFetchError("open-meteo: answer lacks the current section")) }
        if forecast.hours > 0, answer.hourly == nil { return .failure(WeatherFetchError("open-meteo: answer lacks the hourly section")) }
        if forecast.days > 0, answer.daily == nil { return .failure(WeatherFetchError("open-meteo: answer lacks the daily section")) }

        let units = OpenMeteoUnits(current: answer.current_units ?? [:])
        func value(_ key: String) -> Double? { current[key] ?? nil }
        let now = value("time")
        let offset = answer.utc_offset_seconds.flatMap { abs($0) <= 18 * 3600 ? $0 : nil } ?? 0
        var snapshot = WeatherSnapshot(
            current: CurrentConditions(
                observedAt: now,
                temperatureCelsius: units.celsius("temperature_2m", value("temperature_2m")),
                apparentTemperatureCelsius: units.celsius("apparent_temperature", value("apparent_temperature")),
                dewPointCelsius: units.celsius("dew_point_2m", value("dew_point_2m")),
                relativeHumidityRatio: units.ratio(value("relative_humidity_2m")),
                windSpeedMetersPerSecond: units.metersPerSecond("wind_speed_10m", value("wind_speed_10m")),
                windGustMetersPerSecond: units.metersPerSecond("wind_gusts_10m", value("wind_gusts_10m")),
                windDirectionDegrees: value("wind_direction_10m"),
                pressureMslPascals: units.pascals("pressure_msl", value("pressure_msl")),
                cloudCoverRatio: units.ratio(value("cloud_cover")),
                precipitationMeters: units.meters(precipitation: "precipitation", value("precipitation")),
                uvIndex: value("uv_index"),
                visibilityMeters: units.meters(length: "visibility", value("visibility")),
                isDay: value("is_day").map { $0 != 0 },
                conditionCode: value("weather_code").flatMap(Self.code)
            ),
            timezone: answer.timezone,
            utcOffsetSeconds: offset,
            latitude: answer.latitude,
            longitude: answer.longitude
        )
        if forecast.hours > 0, let hourly = answer.hourly {
            snapshot.hourly = hourlySteps(hourly, units: OpenMeteoUnits(current: answer.hourly_units ?? [:]), now: now, hours: forecast.hours)
        }
        if forecast.days > 0, let daily = answer.daily {
            snapshot.daily = dailySteps(daily, units: OpenMeteoUnits(current: answer.daily_units ?? [:]), now: now,
                                        offset: offset, days: forecast.days)
        }
        return .success(snapshot)
    }

    private static func hourlySteps(_ hourly: [String: [Double?]], units: OpenMeteoUnits, now: Double?, hours: Int) -> [HourlyForecast] {
        guard let times = hourly["time"] else { return [] }
        func series(_ key: String, _ index: Int) -> Double? {
            guard let values = hourly[key], index < values.count else { return nil }
            return values[index]
        }
        // Hours ahead count from the current whole hour: `hour="1"` is the next whole hour.
        let base = now.map { ($0 / 3600).rounded(.down) * 3600 } ?? times.first.flatMap { $0 }
        var steps: [HourlyForecast] = []
        for (index, time) in times.enumerated() {
            guard let time, let base, let ahead = wholeNumber((time - base) / 3600), ahead >= 1, ahead <= hours else { continue }
            steps.append(HourlyForecast(
                hoursAhead: ahead,
                time: time,
                temperatureCelsius: units.celsius("temperature_2m", series("temperature_2m", index)),
                precipitationProbabilityRatio: units.ratio(series("precipitation_probability", index)),
                precipitationMeters: units.meters(precipitation: "precipitation", series("precipitation", index)),
                windSpeedMetersPerSecond: units.metersPerSecond("wind_speed_10m", series("wind_speed_10m", index)),
                conditionCode: series("weather_code", index).flatMap(code)
            ))
        }
        return steps
    }

    private static func dailySteps(_ daily: [String: [Double?]], units: OpenMeteoUnits, now: Double?, offset: Int, days: Int) -> [DailyForecast] {
        guard let times = daily["time"] else { return [] }
        func series(_ key: String, _ index: Int) -> Double? {
            guard let values = daily[key], index < values.count else { return nil }
            return values[index]
        }
        // Day 0 is the local calendar day of the observation (the API starts daily data at
        // local midnight today; counting by dates keeps that true whatever the answer holds).
        func localDay(_ t: Double) -> Int? { wholeNumber((t + Double(offset)) / 86400) }
        let today = now.flatMap(localDay) ?? times.first.flatMap { $0 }.flatMap(localDay)
        var steps: [DailyForecast] = []
        for (index, time) in times.enumerated() {
            guard let time, let today, let day = localDay(time) else { continue }
            let ahead = day - today
            guard ahead >= 0, ahead < days else { continue }
            steps.append(DailyForecast(
                daysAhead: ahead,
                date: time,
                temperatureMaxCelsius: units.celsius("temperature_2m_max", series("temperature_2m_max", index)),
                temperatureMinCelsius: units.celsius("temperature_2m_min", series("temperature_2m_min", index)),
                precipitationSumMeters: units.meters(precipitation: "precipitation_sum", series("precipitation_sum", index)),
                precipitationProbabilityRatio: units.ratio(series("precipitation_probability_max", index)),
                windSpeedMaxMetersPerSecond: units.metersPerSecond("wind_speed_10m_max", series("wind_speed_10m_max", index)),
                windGustMaxMetersPerSecond: units.metersPerSecond("wind_gusts_10m_max", series("wind_gusts_10m_max", index)),
                uvIndexMax: series("uv_index_max", index),
                conditionCode: series("weather_code", index).flatMap(code),
                sunrise: series("sunrise", index),
                sunset: series("sunset", index)
            ))
        }
        return steps
    }

    /// `value` rounded down, or nil when it is not a number a clock or calendar could hold
    /// (answers are untrusted: `Int(1e300)` would trap).
    static func wholeNumber(_ value: Double) -> Int? {
        guard value.isFinite, abs(value) < 1e12 else { return nil }
        return Int(value.rounded(.down))
    }

    static func code(_ value: Double) -> Int? {
        guard value.isFinite, value >= 0, value < 1000 else { return nil }
        return Int(value)
    }
}

/// One place's answer. Sections are dictionaries so that variables the API adds or drops never
/// break decoding; every value may be null.
struct OpenMeteoForecast: Decodable {
    let latitude: Double?
    let longitude: Double?
    let utc_offset_seconds: Int?
    let timezone: String?
    let current_units: [String: String]?
    let current: [String: Double?]?
    let hourly_units: [String: String]?
    let hourly: [String: [Double?]]?
    let daily_units: [String: String]?
    let daily: [String: [Double?]]?
    let error: Bool?
    let reason: String?
}

struct OpenMeteoErrorBody: Decodable {
    let error: Bool?
    let reason: String?
}

/// Converts a section's values to base units by the unit strings the answer declares
/// (`current_units` etc.), so the exporter stays right whatever unit parameters a server applied.
struct OpenMeteoUnits {
    let current: [String: String]

    func celsius(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch current[key] {
        case "°F": return (value - 32) * 5 / 9
        default: return value
        }
    }

    func metersPerSecond(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch current[key] {
        case "m/s": return value
        case "mp/h", "mph": return WindSpeedUnit.milesPerHour.toMetersPerSecond(value)
        case "kn", "kt", "knots": return WindSpeedUnit.knots.toMetersPerSecond(value)
        default: return WindSpeedUnit.kilometersPerHour.toMetersPerSecond(value)  // "km/h", the API's default
        }
    }

    func meters(precipitation key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch current[key] {
        case "inch": return value * 0.0254
        case "cm": return value / 100
        default: return value / 1000  // "mm"
        }
    }

    func meters(length key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch current[key] {
        case "ft": return value * 0.3048
        default: return value
        }
    }

    func pascals(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch current[key] {
        case "Pa": return value
        case "kPa": return value * 1000
        default: return value * 100  // "hPa"
        }
    }

    func ratio(_ value: Double?) -> Double? {
        value.map { $0 / 100 }
    }
}
