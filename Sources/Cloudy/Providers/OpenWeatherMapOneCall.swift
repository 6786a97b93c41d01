import Foundation

/// OpenWeatherMap's One Call API 3.0 (`data/3.0/onecall`), used when the config sets
/// `provider.one_call: true`: one request per place with current conditions, 48 hourly steps and
/// 8 days, including dew point and UV that the free 2.5 endpoints lack.
extension OpenWeatherMapProvider {
    static let oneCallPath = "/data/3.0/onecall"

    public static func decode(oneCall body: [UInt8], place: Place, settings: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        let answer: OneCallAnswer
        do {
            answer = try JSONDecoder().decode(OneCallAnswer.self, from: Data(body))
        } catch {
            return .failure(WeatherFetchError("openweathermap: One Call answer is not valid: \(OpenMeteoProvider.describe(error))"))
        }
        guard let current = answer.current, let now = current.dt, now.isFinite else {
            return .failure(WeatherFetchError("openweathermap: One Call answer lacks the current section"))
        }
        if settings.hours > 0, answer.hourly == nil { return .failure(WeatherFetchError("openweathermap: One Call answer lacks the hourly section")) }
        if settings.days > 0, answer.daily == nil { return .failure(WeatherFetchError("openweathermap: One Call answer lacks the daily section")) }
        let offset = answer.timezone_offset.flatMap { abs($0) <= 18 * 3600 ? $0 : nil } ?? 0
        let condition = current.weather?.first
        var snapshot = WeatherSnapshot(
            current: CurrentConditions(
                observedAt: now,
                temperatureCelsius: current.temp,
                apparentTemperatureCelsius: current.feels_like,
                dewPointCelsius: current.dew_point,
                relativeHumidityRatio: current.humidity.map { $0 / 100 },
                windSpeedMetersPerSecond: current.wind_speed,
                windGustMetersPerSecond: current.wind_gust,
                windDirectionDegrees: current.wind_deg,
                pressureMslPascals: current.pressure.map { $0 * 100 },
                cloudCoverRatio: current.clouds.map { $0 / 100 },
                precipitationMeters: ((current.rain?.oneHour ?? 0) + (current.snow?.oneHour ?? 0)) / 1000,
                uvIndex: current.uvi,
                visibilityMeters: current.visibility,
                isDay: condition?.icon.map { $0.hasSuffix("d") },
                conditionCode: condition?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:))
            ),
            timezone: place.timezone ?? answer.timezone,
            utcOffsetSeconds: offset,
            latitude: answer.lat,
            longitude: answer.lon
        )
        snapshot.hourly = (answer.hourly ?? []).compactMap { hour in
            guard let time = hour.dt, let ahead = hoursAhead(time, now: now), ahead >= 1, ahead <= settings.hours else { return nil }
            return HourlyForecast(
                hoursAhead: ahead, time: time, temperatureCelsius: hour.temp, precipitationProbabilityRatio: hour.pop,
                precipitationMeters: ((hour.rain?.oneHour ?? 0) + (hour.snow?.oneHour ?? 0)) / 1000,
                windSpeedMetersPerSecond: hour.wind_speed,
                conditionCode: hour.weather?.first?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:))
            )
        }
        // Daily entries are stamped at local noon; their local date against today's gives the day.
        func localDay(_ t: Double) -> Int? { OpenMeteoProvider.wholeNumber((t + Double(offset)) / 86400) }
        if let today = localDay(now) {
            snapshot.daily = (answer.daily ?? []).compactMap { day in
                guard let time = day.dt, let date = localDay(time), date - today >= 0, date - today < settings.days else { return nil }
                return DailyForecast(
                    daysAhead: date - today, date: Double(date * 86400 - offset),
                    temperatureMaxCelsius: day.temp?.max, temperatureMinCelsius: day.temp?.min,
                    precipitationSumMeters: ((day.rain ?? 0) + (day.snow ?? 0)) / 1000,
                    precipitationProbabilityRatio: day.pop,
                    windSpeedMaxMetersPerSecond: day.wind_speed, windGustMaxMetersPerSecond: day.wind_gust,
                    uvIndexMax: day.uvi,
                    conditionCode: day.weather?.first?.id.flatMap(ConditionMapping.wmo(openWeatherMapID:)),
                    sunrise: day.sunrise, sunset: day.sunset
                )
            }
        }
        return .success(snapshot)
    }
}

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
}
