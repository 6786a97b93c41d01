import Foundation

/// Open-Meteo's answers read into snapshots: the batch's JSON split into one entry per place,
/// each entry's current, hourly and daily sections mapped by `OpenMeteoForecast`.
extension OpenMeteoProvider {
    /// Decodes an answer for `places` (an object for one place, an array in request order for
    /// several). A place whose entry is broken or lacks a section fails alone; an array of the
    /// wrong length fails the whole batch, since entries can no longer be matched to places.
    /// A profile boundary: bench/refresh counts this function, less `OpenMeteoForecast.snapshot`, as
    /// the "decode" phase.
    @inline(never)
    public static func decode(
        _ body: [UInt8], places: [Place],
        forecast: ForecastSettings
    ) -> [Result<WeatherSnapshot, WeatherFetchError>] {
        OpenMeteoBatches.entries(body, count: places.count, as: OpenMeteoForecast.self, source: "open-meteo")
            .map { entry in entry.flatMap { $0.snapshot(forecast: forecast) } }
    }
}

/// One place's answer, read straight into typed series (`OpenMeteoForecast+Reading.swift`): each
/// section is a struct of arrays (one optional array per variable Cloudy reads), so no dictionary
/// is built and variables the API adds are skipped; a variable it drops is nil, and every value
/// may be null.
// Properties carry the API's own JSON field names, as the readers' cases spell them.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OpenMeteoForecast {
    var latitude: Double? = nil
    var longitude: Double? = nil
    var utc_offset_seconds: Int? = nil
    var timezone: String? = nil
    var current_units: OpenMeteoSectionUnits? = nil
    var current: Current? = nil
    var hourly_units: OpenMeteoSectionUnits? = nil
    var hourly: Hourly? = nil
    var daily_units: OpenMeteoSectionUnits? = nil
    var daily: Daily? = nil
    var error: Bool? = nil
    var reason: String? = nil

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Current {
        var time: Double? = nil
        var temperature_2m: Double? = nil
        var apparent_temperature: Double? = nil
        var dew_point_2m: Double? = nil
        var relative_humidity_2m: Double? = nil
        var wind_speed_10m: Double? = nil
        var wind_gusts_10m: Double? = nil
        var wind_direction_10m: Double? = nil
        var pressure_msl: Double? = nil
        var cloud_cover: Double? = nil
        var precipitation: Double? = nil
        var uv_index: Double? = nil
        var visibility: Double? = nil
        var is_day: Double? = nil
        var weather_code: Double? = nil
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Hourly {
        var time: Values? = nil
        var temperature_2m: Values? = nil
        var precipitation_probability: Values? = nil
        var precipitation: Values? = nil
        var wind_speed_10m: Values? = nil
        var weather_code: Values? = nil
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Daily {
        var time: Values? = nil
        var temperature_2m_max: Values? = nil
        var temperature_2m_min: Values? = nil
        var precipitation_sum: Values? = nil
        var precipitation_probability_max: Values? = nil
        var wind_speed_10m_max: Values? = nil
        var wind_gusts_10m_max: Values? = nil
        var uv_index_max: Values? = nil
        var weather_code: Values? = nil
        var sunrise: Values? = nil
        var sunset: Values? = nil
    }

    /// The snapshot this answer gives, or why it gives none (an error entry, a missing section).
    /// A profile boundary: bench/refresh counts this function as the "convert" phase.
    @inline(never)
    func snapshot(forecast: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        if let reason, error == true {
            return .failure(WeatherFetchError("open-meteo: " + String(reason.prefix(200))))
        }
        if let problem = (forecast.hours > 0 ? hourly?.misalignment("hourly") : nil)
            ?? (forecast.days > 0 ? daily?.misalignment("daily") : nil)
        {
            return .failure(WeatherFetchError("open-meteo: answer's " + problem))
        }
        let sections = WeatherAPI.requireSections(
            of: "open-meteo: answer", current: current, hourly: hourly != nil,
            daily: daily != nil, settings: forecast)
        return sections.map { current in
            let now = current.time
            let offset = WeatherAPI.plausibleOffset(utc_offset_seconds)
            var snapshot = WeatherSnapshot(
                current: currentConditions(current), timezone: timezone,
                utcOffsetSeconds: offset, latitude: latitude, longitude: longitude)
            if forecast.hours > 0 {
                snapshot.hourly = hourlySteps(now: now, offset: offset, hours: forecast.hours)
            }
            if forecast.days > 0 {
                snapshot.daily = dailySteps(now: now, offset: offset, days: forecast.days)
            }
            return snapshot
        }
    }

    typealias Units = OpenMeteoSectionUnits

    /// The current section in base units.
    func currentConditions(_ current: Current) -> CurrentConditions {
        let units = current_units ?? Units()
        return CurrentConditions(
            observedAt: current.time,
            temperatureCelsius: Units.celsius(units.temperature_2m)(current.temperature_2m),
            apparentTemperatureCelsius: Units.celsius(units.apparent_temperature)(current.apparent_temperature),
            dewPointCelsius: Units.celsius(units.dew_point_2m)(current.dew_point_2m),
            relativeHumidityRatio: Units.Conversion.ratio(current.relative_humidity_2m),
            windSpeedMetersPerSecond: Units.metersPerSecond(units.wind_speed_10m)(current.wind_speed_10m),
            windGustMetersPerSecond: Units.metersPerSecond(units.wind_gusts_10m)(current.wind_gusts_10m),
            windDirectionDegrees: current.wind_direction_10m,
            pressureMslPascals: Units.pascals(units.pressure_msl)(current.pressure_msl),
            cloudCoverRatio: Units.Conversion.ratio(current.cloud_cover),
            precipitationMeters: Units.meters(precipitation: units.precipitation)(current.precipitation),
            uvIndex: current.uv_index,
            visibilityMeters: Units.meters(length: units.visibility)(current.visibility),
            isDay: current.is_day.map { $0 != 0 },
            conditionCode: current.weather_code.flatMap(Self.code)
        )
    }

    /// The hourly section's steps 1…`hours` in base units. Hours ahead count from the current
    /// local whole hour, where the series starts: `hour="1"` is the next whole hour.
    func hourlySteps(now: Double?, offset: Int, hours: Int) -> [HourlyForecast] {
        guard let hourly, let times = hourly.time?.values else { return [] }
        let units = hourly_units ?? Units()
        let temperature = Series(hourly.temperature_2m, Units.celsius(units.temperature_2m))
        let probability = Series(hourly.precipitation_probability, .ratio)
        let precipitation = Series(hourly.precipitation, Units.meters(precipitation: units.precipitation))
        let wind = Series(hourly.wind_speed_10m, Units.metersPerSecond(units.wind_speed_10m))
        let code = Series(hourly.weather_code, .identity)
        guard let now = now ?? times.first.flatMap({ $0 }) else { return [] }
        var steps: [HourlyForecast] = []
        steps.reserveCapacity(min(hours, times.count))
        for (index, time) in times.enumerated() {
            guard let time, let ahead = ForecastTime.hoursAhead(time, now: now, offset: offset), ahead >= 1,
                ahead <= hours
            else { continue }
            steps.append(
                HourlyForecast(
                    hoursAhead: ahead,
                    time: time,
                    temperatureCelsius: temperature[index],
                    precipitationProbabilityRatio: probability[index],
                    precipitationMeters: precipitation[index],
                    windSpeedMetersPerSecond: wind[index],
                    conditionCode: code[index].flatMap(Self.code)
                ))
        }
        return steps
    }

    /// The daily section's days 0…`days` − 1 in base units. Day 0 is the local calendar day of
    /// the observation (the API starts daily data at local midnight today; counting by dates
    /// keeps that true whatever the answer holds). Each day is stamped at its local midnight,
    /// which can sit an hour off the answer's one offset across a daylight-saving change: its
    /// local noon gives the day safely, as Dark Sky's does.
    func dailySteps(now: Double?, offset: Int, days: Int) -> [DailyForecast] {
        guard let daily, let times = daily.time?.values else { return [] }
        let units = daily_units ?? Units()
        let maximum = Series(daily.temperature_2m_max, Units.celsius(units.temperature_2m_max))
        let minimum = Series(daily.temperature_2m_min, Units.celsius(units.temperature_2m_min))
        let precipitation = Series(daily.precipitation_sum, Units.meters(precipitation: units.precipitation_sum))
        let probability = Series(daily.precipitation_probability_max, .ratio)
        let wind = Series(daily.wind_speed_10m_max, Units.metersPerSecond(units.wind_speed_10m_max))
        let gusts = Series(daily.wind_gusts_10m_max, Units.metersPerSecond(units.wind_gusts_10m_max))
        let uvIndex = Series(daily.uv_index_max, .identity)
        let code = Series(daily.weather_code, .identity)
        let sunrise = Series(daily.sunrise, .identity)
        let sunset = Series(daily.sunset, .identity)
        func localDay(_ time: Double) -> Int? { ForecastTime.localDay(time, offset: offset) }
        let today = now.flatMap(localDay) ?? times.first.flatMap { $0 }.flatMap(localDay)
        var steps: [DailyForecast] = []
        steps.reserveCapacity(min(days, times.count))
        for (index, time) in times.enumerated() {
            guard let time, let today, let day = localDay(time + 43_200), day - today >= 0, day - today < days else {
                continue
            }
            steps.append(
                DailyForecast(
                    daysAhead: day - today,
                    date: time,
                    temperatureMaxCelsius: maximum[index],
                    temperatureMinCelsius: minimum[index],
                    precipitationSumMeters: precipitation[index],
                    precipitationProbabilityRatio: probability[index],
                    windSpeedMaxMetersPerSecond: wind[index],
                    windGustMaxMetersPerSecond: gusts[index],
                    uvIndexMax: uvIndex[index],
                    conditionCode: code[index].flatMap(Self.code),
                    sunrise: sunrise[index],
                    sunset: sunset[index]
                ))
        }
        return steps
    }

    /// One variable's series as the answer holds it: numbers and nulls.
    struct Values: JSONReadable {
        let values: [Double?]

        init(json: inout JSONReader) throws {
            var values: [Double?] = []
            values.reserveCapacity(32)
            try json.readArray { json in values.append(try json.readOptional(Double.self)) }
            self.values = values
        }
    }

    /// One variable's series with its conversion to base units.
    struct Series {
        let values: [Double?]
        let conversion: Units.Conversion

        init(_ values: Values?, _ conversion: Units.Conversion) {
            self.values = values?.values ?? []
            self.conversion = conversion
        }

        /// Element `index` in base units; nil when the series is missing or short, or the value null.
        subscript(index: Int) -> Double? {
            index < values.count ? conversion(values[index]) : nil
        }
    }

    /// A WMO weather code, or nil for a number no code has (99.5 is not 99, "heavy hail").
    static func code(_ value: Double) -> Int? {
        guard value.isFinite, value >= 0, value < 1000, value.rounded() == value else { return nil }
        return Int(value)
    }
}
