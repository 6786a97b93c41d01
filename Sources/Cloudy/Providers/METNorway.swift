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
    let baseURL: String
    let forecast: ForecastSettings
    let timeout: Double
    let client: CurlHTTPClient
    let recorder: UpstreamRecording
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

    public init(baseURL: String, forecast: ForecastSettings, timeout: Double, client: CurlHTTPClient,
                recorder: UpstreamRecording, logger: Logger) {
        self.baseURL = baseURL
        self.forecast = forecast
        self.timeout = timeout
        self.client = client
        self.recorder = recorder
        self.logger = logger
    }

    public func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        // MET asks for at most 20 requests a second in aggregate; a few at once stays well below.
        fetchEachPlace(places, maxInFlight: 4) { place in self.fetch(place) }
    }

    func url(for place: Place) -> String {
        "\(baseURL)/weatherapi/locationforecast/2.0/compact?lat=\(OpenMeteoProvider.coordinate(place.latitude))&lon=\(OpenMeteoProvider.coordinate(place.longitude))"
    }

    func fetch(_ place: Place) -> Result<WeatherSnapshot, WeatherFetchError> {
        let url = url(for: place)
        let now = Date().timeIntervalSince1970
        let cached = cache.withLockedValue { $0[place.name] }.flatMap { $0.url == url ? $0 : nil }
        if let cached, now < cached.expires {
            return .success(cached.snapshot)  // MET asks for no request before Expires
        }
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if let lastModified = cached?.lastModified { headers.append(("If-Modified-Since", lastModified)) }
        let response: HTTPResponse
        switch client.fetch(HTTPRequest(url: url, headers: headers, timeout: timeout), countedAs: name.rawValue, by: recorder) {
        case let .failure(error): return .failure(error)
        case let .success(answer): response = answer
        }
        let expires = response.headers["expires"].flatMap(HTTPDate.parse)?.timeIntervalSince1970 ?? now + 1800
        switch response.status {
        case 304:
            guard var kept = cached else { return .failure(WeatherFetchError("met-norway: 304 without an earlier answer")) }
            kept.expires = expires
            cache.withLockedValue { $0[place.name] = kept }
            return .success(kept.snapshot)
        case 200, 203:
            if response.status == 203, warnedDeprecation.withLockedValue({ warned in defer { warned = true }; return !warned }) {
                logger.warning("met-norway answers 203: this product version is deprecated or beta; check api.met.no for its successor")
            }
            let offset = utcOffset(for: place)
            let outcome = Self.decode(response.body, place: place, settings: forecast, offset: offset)
            if case let .success(snapshot) = outcome {
                cache.withLockedValue {
                    $0[place.name] = Cached(url: url, snapshot: snapshot, lastModified: response.headers["last-modified"], expires: expires)
                }
            }
            return outcome
        default:
            let retryAfter = response.headers["retry-after"].flatMap { RetryAfter.seconds($0) }
            var message = "met-norway: HTTP \(response.status)"
            if response.status == 403 { message += " (MET refuses this User-Agent or has blocked this client)" }
            return .failure(WeatherFetchError(message, retryAfter: retryAfter, isRateLimit: response.status == 429 || response.status == 403))
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
            logger.info("met-norway sends no time zone; using the solar offset of the longitude (set timezone: to override)",
                        metadata: ["location": "\(place.name)", "utc_offset_hours": "\(hours)"])
        }
        return { _ in hours * 3600 }
    }

    public static func decode(_ body: [UInt8], place: Place, settings: ForecastSettings,
                              offset: (Double) -> Int) -> Result<WeatherSnapshot, WeatherFetchError> {
        let document: METDocument
        do {
            document = try JSONDecoder().decode(METDocument.self, from: Data(body))
        } catch {
            return .failure(WeatherFetchError("met-norway: answer is not valid: \(OpenMeteoProvider.describe(error))"))
        }
        let steps = (document.properties?.timeseries ?? []).compactMap { step -> (time: Double, data: METData)? in
            guard let time = step.time.flatMap(ISOTime.parse), let data = step.data else { return nil }
            return (time, data)
        }.sorted { $0.time < $1.time }
        guard let first = steps.first else { return .failure(WeatherFetchError("met-norway: answer has no timeseries")) }
        let now = first.time
        let instant = first.data.instant?.details
        let symbol = first.data.next_1_hours?.summary?.symbol_code ?? first.data.next_6_hours?.summary?.symbol_code
        var snapshot = WeatherSnapshot(
            current: CurrentConditions(
                observedAt: now,
                temperatureCelsius: instant?.air_temperature,
                relativeHumidityRatio: instant?.relative_humidity.map { $0 / 100 },
                windSpeedMetersPerSecond: instant?.wind_speed,
                windDirectionDegrees: instant?.wind_from_direction,
                pressureMslPascals: instant?.air_pressure_at_sea_level.map { $0 * 100 },
                cloudCoverRatio: instant?.cloud_area_fraction.map { $0 / 100 },
                isDay: symbol.flatMap(ConditionMapping.isDay(metSymbol:)),
                conditionCode: symbol.flatMap(ConditionMapping.wmo(metSymbol:))
            ),
            timezone: place.timezone,
            utcOffsetSeconds: offset(now),
            latitude: document.geometry?.coordinates?.dropFirst().first,
            longitude: document.geometry?.coordinates?.first
        )
        // MET's next_1_hours looks forward from its step; Cloudy's hourly families look back
        // over the hour before, so hour h takes the amounts of the step at h − 1.
        var previousHour: [Double: METPeriod] = [:]
        for step in steps { if let period = step.data.next_1_hours { previousHour[step.time + 3600] = period } }
        if settings.hours > 0 {
            snapshot.hourly = steps.compactMap { step in
                guard let ahead = hoursAhead(step.time, now: now), ahead >= 1, ahead <= settings.hours,
                      let period = previousHour[step.time] else { return nil }
                return HourlyForecast(
                    hoursAhead: ahead, time: step.time, temperatureCelsius: step.data.instant?.details?.air_temperature,
                    precipitationMeters: period.details?.precipitation_amount.map { $0 / 1000 },
                    windSpeedMetersPerSecond: step.data.instant?.details?.wind_speed,
                    conditionCode: period.summary?.symbol_code.flatMap(ConditionMapping.wmo(metSymbol:))
                )
            }
        }
        // Each step's precipitation is its own period: next_1_hours where the series is hourly,
        // next_6_hours where it is six-hourly, so no amount is counted twice.
        let forecastSteps = steps.map { step in
            let period = step.data.next_1_hours ?? step.data.next_6_hours
            let temperature = step.data.instant?.details?.air_temperature
            return ForecastStep(time: step.time, temperatureMin: temperature, temperatureMax: temperature,
                                precipitation: period?.details?.precipitation_amount.map { $0 / 1000 },
                                windSpeed: step.data.instant?.details?.wind_speed,
                                conditionCode: period?.summary?.symbol_code.flatMap(ConditionMapping.wmo(metSymbol:)))
        }
        snapshot.daily = DailyAggregate.days(forecastSteps, now: now, days: settings.days, offset: offset)
        return .success(snapshot)
    }
}

struct METDocument: Decodable {
    struct Geometry: Decodable { let coordinates: [Double]? }
    struct Properties: Decodable { let timeseries: [METStep]? }
    let geometry: Geometry?
    let properties: Properties?
}

struct METStep: Decodable {
    let time: String?
    let data: METData?
}

struct METData: Decodable {
    struct Instant: Decodable { let details: METDetails? }
    let instant: Instant?
    let next_1_hours: METPeriod?
    let next_6_hours: METPeriod?
}

struct METDetails: Decodable {
    let air_temperature, air_pressure_at_sea_level, cloud_area_fraction, relative_humidity, wind_from_direction, wind_speed: Double?
}

struct METPeriod: Decodable {
    struct Summary: Decodable { let symbol_code: String? }
    struct Details: Decodable { let precipitation_amount: Double? }
    let summary: Summary?
    let details: Details?
}

/// `2026-06-15T12:00:00Z`, the only time form MET sends.
enum ISOTime {
    static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"), bytes[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: bytes[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        return Double(HTTPDate.daysFromCivil(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second)
    }
}
