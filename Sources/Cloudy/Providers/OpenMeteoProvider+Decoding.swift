import Foundation

/// Open-Meteo's answers read into snapshots: the batch's JSON split into one entry per place,
/// each entry's current, hourly and daily sections mapped by `OpenMeteoForecast`.
extension OpenMeteoProvider {
    /// Decodes an answer for `places` (an object for one place, an array in request order for
    /// several). A place whose entry is broken or lacks a section fails alone; an array of the
    /// wrong length fails the whole batch, since entries can no longer be matched to places.
    public static func decode(
        _ body: [UInt8], places: [Place],
        forecast: ForecastSettings
    ) -> [Result<WeatherSnapshot, WeatherFetchError>] {
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
            return failAll("answer is not valid JSON: \(WeatherAPI.describe(error))")
        }
        guard entries.count == places.count else {
            return failAll("answer has \(entries.count) entries for \(places.count) places")
        }
        return entries.map { entry in entry.flatMap { $0.snapshot(forecast: forecast) } }
    }

    /// One element of a several-place answer, decoded on its own so a bad one spoils only its place.
    struct Entry: Decodable {
        let result: Result<OpenMeteoForecast, WeatherFetchError>
        init(from decoder: Decoder) throws {
            do {
                result = .success(try OpenMeteoForecast(from: decoder))
            } catch {
                result = .failure(WeatherFetchError("open-meteo: bad entry: \(WeatherAPI.describe(error))"))
            }
        }
    }
}

/// One place's answer. Sections are dictionaries so that variables the API adds or drops never
/// break decoding; every value may be null.
// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
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

    /// The snapshot this answer gives, or why it gives none (an error entry, a missing section).
    func snapshot(forecast: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        if let reason, error == true {
            return .failure(WeatherFetchError("open-meteo: " + String(reason.prefix(200))))
        }
        let sections = WeatherAPI.requireSections(
            of: "open-meteo: answer", current: current, hourly: hourly != nil,
            daily: daily != nil, settings: forecast)
        return sections.map { current in
            let now = current["time"] ?? nil
            let offset = WeatherAPI.plausibleOffset(utc_offset_seconds)
            var snapshot = WeatherSnapshot(
                current: currentConditions(current), timezone: timezone,
                utcOffsetSeconds: offset, latitude: latitude, longitude: longitude)
            if forecast.hours > 0 {
                snapshot.hourly = hourlySteps(now: now, hours: forecast.hours)
            }
            if forecast.days > 0 {
                snapshot.daily = dailySteps(now: now, offset: offset, days: forecast.days)
            }
            return snapshot
        }
    }

    /// The current section in base units.
    func currentConditions(_ current: [String: Double?]) -> CurrentConditions {
        let units = OpenMeteoSectionUnits(declared: current_units ?? [:])
        func value(_ key: String) -> Double? { current[key] ?? nil }
        return CurrentConditions(
            observedAt: value("time"),
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
        )
    }

    /// The hourly section's steps 1…`hours` in base units. Hours ahead count from the current
    /// whole hour: `hour="1"` is the next whole hour.
    func hourlySteps(now: Double?, hours: Int) -> [HourlyForecast] {
        guard let hourly, let times = hourly["time"] else { return [] }
        let units = OpenMeteoSectionUnits(declared: hourly_units ?? [:])
        func series(_ key: String, _ index: Int) -> Double? { Self.value(hourly, key, index) }
        let base = now.map { ($0 / 3600).rounded(.down) * 3600 } ?? times.first.flatMap { $0 }
        var steps: [HourlyForecast] = []
        for (index, time) in times.enumerated() {
            guard let time, let base, let ahead = ForecastTime.wholeNumber((time - base) / 3600),
                ahead >= 1, ahead <= hours
            else { continue }
            steps.append(
                HourlyForecast(
                    hoursAhead: ahead,
                    time: time,
                    temperatureCelsius: units.celsius("temperature_2m", series("temperature_2m", index)),
                    precipitationProbabilityRatio: units.ratio(series("precipitation_probability", index)),
                    precipitationMeters: units.meters(precipitation: "precipitation", series("precipitation", index)),
                    windSpeedMetersPerSecond: units.metersPerSecond("wind_speed_10m", series("wind_speed_10m", index)),
                    conditionCode: series("weather_code", index).flatMap(Self.code)
                ))
        }
        return steps
    }

    /// The daily section's days 0…`days` − 1 in base units. Day 0 is the local calendar day of
    /// the observation (the API starts daily data at local midnight today; counting by dates
    /// keeps that true whatever the answer holds).
    func dailySteps(now: Double?, offset: Int, days: Int) -> [DailyForecast] {
        guard let daily, let times = daily["time"] else { return [] }
        let units = OpenMeteoSectionUnits(declared: daily_units ?? [:])
        func series(_ key: String, _ index: Int) -> Double? { Self.value(daily, key, index) }
        func localDay(_ time: Double) -> Int? { ForecastTime.localDay(time, offset: offset) }
        let today = now.flatMap(localDay) ?? times.first.flatMap { $0 }.flatMap(localDay)
        var steps: [DailyForecast] = []
        for (index, time) in times.enumerated() {
            guard let time, let today, let day = localDay(time), day - today >= 0, day - today < days else { continue }
            steps.append(
                DailyForecast(
                    daysAhead: day - today,
                    date: time,
                    temperatureMaxCelsius: units.celsius("temperature_2m_max", series("temperature_2m_max", index)),
                    temperatureMinCelsius: units.celsius("temperature_2m_min", series("temperature_2m_min", index)),
                    precipitationSumMeters: units.meters(
                        precipitation: "precipitation_sum",
                        series("precipitation_sum", index)),
                    precipitationProbabilityRatio: units.ratio(series("precipitation_probability_max", index)),
                    windSpeedMaxMetersPerSecond: units.metersPerSecond(
                        "wind_speed_10m_max",
                        series("wind_speed_10m_max", index)),
                    windGustMaxMetersPerSecond: units.metersPerSecond(
                        "wind_gusts_10m_max",
                        series("wind_gusts_10m_max", index)),
                    uvIndexMax: series("uv_index_max", index),
                    conditionCode: series("weather_code", index).flatMap(Self.code),
                    sunrise: series("sunrise", index),
                    sunset: series("sunset", index)
                ))
        }
        return steps
    }

    /// Element `index` of a section's series `key`; nil when the series is missing or short.
    private static func value(_ section: [String: [Double?]], _ key: String, _ index: Int) -> Double? {
        guard let values = section[key], index < values.count else { return nil }
        return values[index]
    }

    /// A WMO weather code, or nil for a number no code has.
    static func code(_ value: Double) -> Int? {
        guard value.isFinite, value >= 0, value < 1000 else { return nil }
        return Int(value)
    }
}
