import Foundation

/// OpenWeatherMap's 2.5 answers read into a snapshot: current conditions from `weather`, hourly
/// steps and daily aggregates from the 3-hour steps of `forecast`.
extension OpenWeatherMapProvider {
    /// Both answers of a place, as one.
    public static func decode(
        current currentBody: [UInt8], forecast forecastBody: [UInt8], place: Place,
        settings: ForecastSettings
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        Self.current(currentBody).flatMap { current in
            decode(current: current, forecast: forecastBody, place: place, settings: settings)
        }
    }

    /// The current weather's answer, with the time and the readings every snapshot needs.
    static func current(_ body: [UInt8]) -> Result<CurrentWeather, WeatherFetchError> {
        WeatherAPI.decode(OWMCurrent.self, from: body, as: "openweathermap: current weather").flatMap { answer in
            guard let now = answer.dt, now.isFinite, let main = answer.main else {
                return .failure(WeatherFetchError("openweathermap: current weather lacks dt or main"))
            }
            return .success(CurrentWeather(answer: answer, now: now, main: main))
        }
    }

    /// A current weather answer that has its time and main readings.
    struct CurrentWeather {
        let answer: OWMCurrent
        let now: Double
        let main: OWMMain
    }

    /// The forecast's answer read beside an accepted current weather.
    static func decode(
        current: CurrentWeather, forecast forecastBody: [UInt8], place: Place, settings: ForecastSettings
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        WeatherAPI.decode(OWMForecast.self, from: forecastBody, as: "openweathermap: forecast").map { list in
            snapshot(current, list: list, place: place, settings: settings)
        }
    }

    static func snapshot(
        _ accepted: CurrentWeather, list: OWMForecast, place: Place, settings: ForecastSettings
    ) -> WeatherSnapshot {
        let (current, now, main) = (accepted.answer, accepted.now, accepted.main)
        let offset = WeatherAPI.plausibleOffset(current.timezone ?? list.city?.timezone)
        // Days in the place's `timezone:` when it has one (it follows daylight saving across the
        // five days), else in the one offset OWM reports.
        let offsetAt = ForecastTime.utcOffsets(zone: place.timezone, fixed: offset)
        var snapshot = WeatherSnapshot(
            current: current.conditions(observedAt: now, main: main),
            timezone: place.timezone, utcOffsetSeconds: offset,
            latitude: current.coord?.lat, longitude: current.coord?.lon)
        let entries = (list.list ?? []).filter { $0.dt?.isFinite == true }
        if settings.hours > 0 {
            snapshot.hourly = entries.compactMap { $0.hourly(now: now, hours: settings.hours) }
        }
        snapshot.daily = DailyAggregate.days(
            entries.compactMap(\.step), now: now, days: settings.days, offset: offsetAt)
        if let index = snapshot.daily.firstIndex(where: { $0.daysAhead == 0 }) {
            snapshot.daily[index].sunrise = current.sys?.sunrise
            snapshot.daily[index].sunset = current.sys?.sunset
        }
        return snapshot
    }
}

extension OWMCurrent {
    /// The current conditions in base units (`units=metric` gives °C and m/s already).
    func conditions(observedAt now: Double, main: OWMMain) -> CurrentConditions {
        let condition = weather?.first
        return CurrentConditions(
            observedAt: now,
            temperatureCelsius: main.temp,
            apparentTemperatureCelsius: main.feels_like,
            relativeHumidityRatio: main.humidity.map { $0 / 100 },
            windSpeedMetersPerSecond: wind?.speed,
            windGustMetersPerSecond: wind?.gust,
            windDirectionDegrees: wind?.deg,
            pressureMslPascals: (main.sea_level ?? main.pressure).map { $0 * 100 },
            cloudCoverRatio: clouds?.all.map { $0 / 100 },
            precipitationMeters: OWMAmount.lastHourMeters(rain: rain, snow: snow),
            visibilityMeters: visibility,
            isDay: condition?.icon.map { $0.hasSuffix("d") },
            conditionCode: condition?.wmoCode
        )
    }
}

extension OWMForecast.Entry {
    /// This 3-hour step as hourly step 1…`hours` ahead of `now`, or nil outside that range.
    func hourly(now: Double, hours: Int) -> HourlyForecast? {
        guard let time = dt, let ahead = ForecastTime.hoursAhead(time, now: now), ahead >= 1, ahead <= hours else {
            return nil
        }
        return HourlyForecast(
            hoursAhead: ahead, time: time, temperatureCelsius: main?.temp,
            precipitationProbabilityRatio: pop,
            // A 3-hour amount spread evenly: the best estimate of the hour before the step.
            precipitationMeters: (threeHourPrecipitation ?? 0) / 3 / 1000,
            windSpeedMetersPerSecond: wind?.speed,
            conditionCode: weather?.first?.wmoCode
        )
    }

    /// This 3-hour step for the daily aggregates.
    var step: ForecastStep? {
        guard let time = dt else { return nil }
        return ForecastStep(
            time: time, temperatureMin: main?.temp_min ?? main?.temp,
            temperatureMax: main?.temp_max ?? main?.temp,
            precipitation: (threeHourPrecipitation ?? 0) / 1000, precipitationSpan: -3 * 3600,
            precipitationProbability: pop,
            windSpeed: wind?.speed, windGust: wind?.gust, conditionCode: weather?.first?.wmoCode)
    }
}

// The JSON of the two endpoints; every field optional, as OWM leaves out what did not occur.
struct OWMCondition: Decodable {
    let id: Int?
    let icon: String?
    /// The condition as a WMO code.
    var wmoCode: Int? { id.flatMap(ConditionMapping.wmo(openWeatherMapID:)) }
}
// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OWMMain: Decodable {
    let temp, feels_like, temp_min, temp_max, pressure, sea_level, humidity: Double?
}
struct OWMWind: Decodable { let speed, deg, gust: Double? }
struct OWMClouds: Decodable { let all: Double? }
struct OWMAmount: Decodable {
    let oneHour: Double?
    let threeHours: Double?
    enum CodingKeys: String, CodingKey {
        case oneHour = "1h"
        case threeHours = "3h"
    }

    /// Rain and snow of the last hour in metres; 0 when OWM left both out (none fell).
    static func lastHourMeters(rain: OWMAmount?, snow: OWMAmount?) -> Double {
        ((rain?.oneHour ?? 0) + (snow?.oneHour ?? 0)) / 1000
    }
}
struct OWMCoord: Decodable { let lat, lon: Double? }
struct OWMSys: Decodable { let sunrise, sunset: Double? }

struct OWMCurrent: Decodable {
    let coord: OWMCoord?
    let weather: [OWMCondition]?
    let main: OWMMain?
    let visibility: Double?
    let wind: OWMWind?
    let clouds: OWMClouds?
    let rain: OWMAmount?
    let snow: OWMAmount?
    let dt: Double?
    let sys: OWMSys?
    let timezone: Int?
}

struct OWMForecast: Decodable {
    struct Entry: Decodable {
        let dt: Double?
        let main: OWMMain?
        let weather: [OWMCondition]?
        let wind: OWMWind?
        let pop: Double?
        let rain: OWMAmount?
        let snow: OWMAmount?

        /// Rain and snow over the step's three hours; nil when OWM left both out (none fell).
        var threeHourPrecipitation: Double? {
            if rain?.threeHours == nil, snow?.threeHours == nil { return nil }
            return (rain?.threeHours ?? 0) + (snow?.threeHours ?? 0)
        }
    }
    struct City: Decodable { let timezone: Int? }
    let list: [Entry]?
    let city: City?
}
