import Foundation

/// MET Norway's compact answers read into a snapshot: the first time step is the current
/// conditions, the hourly steps and the daily aggregates come from the time series.
extension METNorwayProvider {
    public static func decode(
        _ body: [UInt8], place: Place, settings: ForecastSettings,
        offset: (Double) -> Int
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        WeatherAPI.decode(METDocument.self, from: body, as: "met-norway: answer").flatMap { document in
            let steps = document.steps
            guard let first = steps.first else {
                return .failure(WeatherFetchError("met-norway: answer has no timeseries"))
            }
            let now = first.time
            var snapshot = WeatherSnapshot(
                current: first.conditions, timezone: place.timezone, utcOffsetSeconds: offset(now),
                latitude: document.geometry?.coordinates?.dropFirst().first,
                longitude: document.geometry?.coordinates?.first
            )
            if settings.hours > 0 {
                snapshot.hourly = hourlySteps(steps, now: now, hours: settings.hours)
            }
            snapshot.daily = DailyAggregate.days(
                steps.map(\.forecastStep), now: now, days: settings.days,
                offset: offset)
            return .success(snapshot)
        }
    }

    /// Hourly steps 1…`hours` ahead of `now`. MET's next_1_hours looks forward from its step;
    /// Cloudy's hourly families look back over the hour before, so hour h takes the amounts of
    /// the step at h − 1.
    static func hourlySteps(_ steps: [METTimedStep], now: Double, hours: Int) -> [HourlyForecast] {
        var previousHour: [Double: METPeriod] = [:]
        for step in steps {
            if let period = step.data.next_1_hours { previousHour[step.time + 3600] = period }
        }
        return steps.compactMap { step in
            guard let ahead = ForecastTime.hoursAhead(step.time, now: now), ahead >= 1, ahead <= hours,
                let period = previousHour[step.time]
            else { return nil }
            return HourlyForecast(
                hoursAhead: ahead, time: step.time, temperatureCelsius: step.details?.air_temperature,
                precipitationMeters: period.precipitationMeters,
                windSpeedMetersPerSecond: step.details?.wind_speed,
                conditionCode: period.wmoCode
            )
        }
    }
}

/// A time series step whose time could be read.
struct METTimedStep {
    var time: Double
    var data: METData

    var details: METDetails? { data.instant?.details }

    /// The step as the current conditions.
    var conditions: CurrentConditions {
        let symbol = data.next_1_hours?.summary?.symbol_code ?? data.next_6_hours?.summary?.symbol_code
        return CurrentConditions(
            observedAt: time,
            temperatureCelsius: details?.air_temperature,
            relativeHumidityRatio: details?.relative_humidity.map { $0 / 100 },
            windSpeedMetersPerSecond: details?.wind_speed,
            windDirectionDegrees: details?.wind_from_direction,
            pressureMslPascals: details?.air_pressure_at_sea_level.map { $0 * 100 },
            cloudCoverRatio: details?.cloud_area_fraction.map { $0 / 100 },
            isDay: symbol.flatMap(ConditionMapping.isDay(metSymbol:)),
            conditionCode: symbol.flatMap(ConditionMapping.wmo(metSymbol:))
        )
    }

    /// The step for the daily aggregates. Its precipitation is its own period: next_1_hours
    /// where the series is hourly, next_6_hours where it is six-hourly, so no amount is counted
    /// twice.
    var forecastStep: ForecastStep {
        let period = data.next_1_hours ?? data.next_6_hours
        return ForecastStep(
            time: time, temperatureMin: details?.air_temperature,
            temperatureMax: details?.air_temperature, precipitation: period?.precipitationMeters,
            precipitationSpan: data.next_1_hours == nil ? 6 * 3600 : 3600,
            windSpeed: details?.wind_speed, conditionCode: period?.wmoCode)
    }
}

struct METDocument: Decodable {
    struct Geometry: Decodable { let coordinates: [Double]? }
    struct Properties: Decodable { let timeseries: [METStep]? }
    let geometry: Geometry?
    let properties: Properties?

    /// The steps whose time and data could be read, in time order.
    var steps: [METTimedStep] {
        (properties?.timeseries ?? []).compactMap { step -> METTimedStep? in
            guard let time = step.time.flatMap(ISOTime.parse), let data = step.data else { return nil }
            return METTimedStep(time: time, data: data)
        }.sorted { $0.time < $1.time }
    }
}

struct METStep: Decodable {
    let time: String?
    let data: METData?
}

// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct METData: Decodable {
    struct Instant: Decodable { let details: METDetails? }
    let instant: Instant?
    let next_1_hours: METPeriod?
    let next_6_hours: METPeriod?
}

// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct METDetails: Decodable {
    let air_temperature, air_pressure_at_sea_level, cloud_area_fraction, relative_humidity: Double?
    let wind_from_direction, wind_speed: Double?
}

// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct METPeriod: Decodable {
    struct Summary: Decodable { let symbol_code: String? }
    struct Details: Decodable { let precipitation_amount: Double? }
    let summary: Summary?
    let details: Details?

    var precipitationMeters: Double? { details?.precipitation_amount.map { $0 / 1000 } }
    var wmoCode: Int? { summary?.symbol_code.flatMap(ConditionMapping.wmo(metSymbol:)) }
}
