import Foundation

/// MET Norway's compact answers read into a snapshot: the step of the current hour is the
/// current conditions, the hourly steps and the daily aggregates come from the time series.
extension METNorwayProvider {
    /// The snapshot of `body` at `now` (nil: at its first step, the moment it was made for).
    public static func decode(
        _ body: [UInt8], place: Place, settings: ForecastSettings,
        offset: (Double) -> Int, now: Double? = nil
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        read(body).map { $0.snapshot(place: place, settings: settings, offset: offset, now: now) }
    }

    /// The answer's steps, kept until its `Expires` and beyond (a 304): each refresh takes its
    /// snapshot at its own moment from them.
    static func read(_ body: [UInt8]) -> Result<METForecast, WeatherFetchError> {
        WeatherAPI.decode(METDocument.self, from: body, as: "met-norway: answer").flatMap { document in
            let steps = document.steps
            guard !steps.isEmpty else {
                return .failure(WeatherFetchError("met-norway: answer has no timeseries"))
            }
            return .success(
                METForecast(
                    steps: steps, latitude: document.geometry?.coordinates?.dropFirst().first,
                    longitude: document.geometry?.coordinates?.first))
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

/// A MET answer read: its steps in time order (at least one) and where it says it is.
struct METForecast {
    var steps: [METTimedStep]
    var latitude, longitude: Double?

    /// The weather as it stands at `clock` (nil: at the first step's time). An answer is kept
    /// for its `Expires` and again on each 304, so its first steps pass: the current conditions
    /// are the latest step not after the clock, and hours and days ahead count from the clock,
    /// as every provider's do from its "now". An answer from ahead of the clock, or from more
    /// than `clockReach` before it (a mirror's frozen copy, a clock set wrong), is read at its
    /// own first step.
    func snapshot(place: Place, settings: ForecastSettings, offset: (Double) -> Int, now clock: Double?)
        -> WeatherSnapshot
    {
        let first = steps[0].time
        let now = clock.flatMap { $0 >= first && $0 < first + Self.clockReach ? $0 : nil } ?? first
        let current = steps.last { $0.time <= now } ?? steps[0]
        var snapshot = WeatherSnapshot(
            current: current.conditions, timezone: place.timezone, utcOffsetSeconds: offset(now),
            latitude: latitude, longitude: longitude)
        if settings.hours > 0 {
            snapshot.hourly = METNorwayProvider.hourlySteps(steps, now: now, hours: settings.hours)
        }
        snapshot.daily = DailyAggregate.days(
            METTimedStep.forecastSteps(steps), now: now, days: settings.days, offset: offset)
        return snapshot
    }
    /// How long after its first step an answer is read at the clock's time: a day, far beyond
    /// what MET keeps an answer for (`Expires`, about half an hour, renewed by a 304 while the
    /// forecast is not remade).
    static var clockReach: Double { 86400 }
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

    /// The steps for the daily aggregates (`forecastStep`), and beside a step whose hour is
    /// followed by no step for a while (the last of the hourly part, before the six-hourly one),
    /// what its six hours have beyond that hour in the hours no step covers.
    static func forecastSteps(_ steps: [METTimedStep]) -> [ForecastStep] {
        var result: [ForecastStep] = []
        result.reserveCapacity(steps.count + 2)
        for (index, step) in steps.enumerated() {
            result.append(step.forecastStep)
            // A step repeated counts once (`DailyAggregate` keeps the first copy), its rest too.
            guard index == 0 || steps[index - 1].time != step.time else { continue }
            let next = steps[(index + 1)...].first { $0.time > step.time }?.time ?? .infinity
            if let rest = step.restOfSixHours(until: next) { result.append(rest) }
        }
        return result
    }

    /// The part of next_6_hours that falls after next_1_hours and before `next` (the next step's
    /// time), for a step that has both: the six hours' amount less the first hour's, spread
    /// evenly over the five hours after it, of which `next` leaves the ones up to it uncovered
    /// (the rest falls in the next step's own period). Nil when the next step follows within
    /// the hour.
    func restOfSixHours(until next: Double) -> ForecastStep? {
        let from = time + 3600
        let to = min(next, time + 6 * 3600)
        guard to > from, let six = data.next_6_hours?.precipitationMeters,
            let one = data.next_1_hours?.precipitationMeters
        else { return nil }
        return ForecastStep(
            time: from, precipitation: max(0, six - one) * (to - from) / (5 * 3600), precipitationSpan: to - from,
            onlyPrecipitation: true)
    }

    /// The step for the daily aggregates. Its precipitation is its own period: next_1_hours
    /// where the series is hourly, next_6_hours where it is six-hourly, so no amount is counted
    /// twice (`forecastSteps` adds what six hours have beyond the hourly part).
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
