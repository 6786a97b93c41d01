import Foundation

/// OpenWeatherMap's One Call API 3.0 (`data/3.0/onecall`), used when the config sets
/// `provider.one_call: true`: one request per place with current conditions, 48 hourly steps and
/// 8 days, including dew point and UV that the free 2.5 endpoints lack, and the alerts in force.
extension OpenWeatherMapProvider {
    static let oneCallPath = "/data/3.0/onecall"

    public static func decode(
        oneCall body: [UInt8], place: Place,
        settings: ForecastSettings
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        WeatherAPI.decode(OneCallAnswer.self, from: body, as: "openweathermap: One Call answer").flatMap {
            $0.snapshot(place: place, settings: settings)
        }
    }
}

// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OneCallAnswer: Decodable {
    struct Moment: Decodable {
        let dt, sunrise, sunset, temp, feels_like, pressure, humidity, dew_point, uvi, clouds, visibility: Double?
        let wind_speed, wind_deg, wind_gust, pop: Double?
        let weather: [OWMCondition]?
        let rain: OWMAmount?
        let snow: OWMAmount?
    }
    struct Day: Decodable {
        struct Temperatures: Decodable { let min, max: Double? }
        let dt, sunrise, sunset, wind_speed, wind_gust, pop, uvi, rain, snow: Double?
        let temp: Temperatures?
        let weather: [OWMCondition]?
    }
    let lat, lon: Double?
    let timezone: String?
    let timezone_offset: Int?
    let current: Moment?
    let hourly: [Moment]?
    let daily: [Day]?
    /// Absent when no alert is in force.
    let alerts: [OWMAlert]?

    /// The snapshot of this answer, or which section it lacks (a current section without a
    /// finite `dt` counts as lacking).
    func snapshot(place: Place, settings: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        let observed = current.flatMap { moment in moment.dt.flatMap { $0.isFinite ? (moment, $0) : nil } }
        let sections = WeatherAPI.requireSections(
            of: "openweathermap: One Call answer", current: observed,
            hourly: hourly != nil, daily: daily != nil, settings: settings)
        return sections.map { current, now in
            let offset = WeatherAPI.plausibleOffset(timezone_offset)
            var snapshot = WeatherSnapshot(
                current: current.conditions(observedAt: now),
                timezone: place.timezone ?? timezone, utcOffsetSeconds: offset,
                latitude: lat, longitude: lon, warnings: OWMAlert.warnings(alerts ?? []))
            snapshot.hourly = (hourly ?? []).compactMap { $0.hourly(now: now, hours: settings.hours) }
            snapshot.daily = dailySteps(
                now: now, offset: ForecastTime.utcOffsets(zone: place.timezone, fixed: offset), days: settings.days)
            return snapshot
        }
    }

    /// Days 0…`days` − 1. Daily entries are stamped at local noon; their local date (at the
    /// place's offset from UTC at that moment) against today's gives the day.
    func dailySteps(now: Double, offset: (Double) -> Int, days: Int) -> [DailyForecast] {
        guard let today = ForecastTime.localDay(now, offset: offset(now)) else { return [] }
        return (daily ?? []).compactMap { day in
            guard let time = day.dt, let date = ForecastTime.localDay(time, offset: offset(time)),
                date - today >= 0, date - today < days
            else { return nil }
            return DailyForecast(
                daysAhead: date - today, date: Double(date * 86400 - offset(time)),
                temperatureMaxCelsius: day.temp?.max, temperatureMinCelsius: day.temp?.min,
                precipitationSumMeters: ((day.rain ?? 0) + (day.snow ?? 0)) / 1000,
                precipitationProbabilityRatio: day.pop,
                windSpeedMaxMetersPerSecond: day.wind_speed, windGustMaxMetersPerSecond: day.wind_gust,
                uvIndexMax: day.uvi,
                conditionCode: day.weather?.first?.wmoCode,
                sunrise: day.sunrise, sunset: day.sunset
            )
        }
    }
}

extension OneCallAnswer.Moment {
    /// This moment as the current conditions in base units.
    func conditions(observedAt now: Double) -> CurrentConditions {
        let condition = weather?.first
        return CurrentConditions(
            observedAt: now,
            temperatureCelsius: temp,
            apparentTemperatureCelsius: feels_like,
            dewPointCelsius: dew_point,
            relativeHumidityRatio: humidity.map { $0 / 100 },
            windSpeedMetersPerSecond: wind_speed,
            windGustMetersPerSecond: wind_gust,
            windDirectionDegrees: wind_deg,
            pressureMslPascals: pressure.map { $0 * 100 },
            cloudCoverRatio: clouds.map { $0 / 100 },
            precipitationMeters: OWMAmount.lastHourMeters(rain: rain, snow: snow),
            uvIndex: uvi,
            visibilityMeters: visibility,
            isDay: condition?.icon.map { $0.hasSuffix("d") },
            conditionCode: condition?.wmoCode
        )
    }

    /// This moment as hourly step 1…`hours` ahead of `now`, or nil outside that range.
    func hourly(now: Double, hours: Int) -> HourlyForecast? {
        guard let time = dt, let ahead = ForecastTime.hoursAhead(time, now: now), ahead >= 1, ahead <= hours else {
            return nil
        }
        return HourlyForecast(
            hoursAhead: ahead, time: time, temperatureCelsius: temp, precipitationProbabilityRatio: pop,
            precipitationMeters: OWMAmount.lastHourMeters(rain: rain, snow: snow),
            windSpeedMetersPerSecond: wind_speed,
            conditionCode: weather?.first?.wmoCode
        )
    }
}

/// One entry of One Call's `alerts`. OpenWeatherMap passes the agency's text on without a
/// severity, and some agencies' alerts arrive once per language.
// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OWMAlert: Decodable {
    let sender_name, event, description: String?
    let start, end: Double?
    let tags: [String]?

    /// The alerts as warnings, each once: the same sender, times and tags are the same alert in
    /// another language, and the first one stays. That key is the id too (One Call gives none).
    static func warnings(_ alerts: [OWMAlert]) -> [WeatherWarning] {
        var seen = Set<String>()
        return alerts.compactMap { alert in
            func time(_ value: Double?) -> String { value.flatMap(ForecastTime.wholeNumber).map { String($0) } ?? "-" }
            let sender = alert.sender_name ?? ""
            let id = "\(sender) \(time(alert.start))-\(time(alert.end)) \((alert.tags ?? []).joined(separator: ","))"
            guard seen.insert(id).inserted else { return nil }
            let event = alert.event ?? ""
            return WeatherWarning(
                id: id, source: ProviderName.openWeatherMap.rawValue, event: event, severity: .unknown,
                headline: event, description: alert.description ?? "", sender: sender, onset: alert.start,
                expires: alert.end)
        }
    }
}
