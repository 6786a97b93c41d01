/// One forecast step of a provider without daily values, for `DailyAggregate`.
struct ForecastStep {
    var time: Double
    var temperatureMin: Double?
    var temperatureMax: Double?
    /// Precipitation attributed to this step's period, metres.
    var precipitation: Double?
    var precipitationProbability: Double?
    var windSpeed: Double?
    var windGust: Double?
    var conditionCode: Int?
}

/// Daily min/max/sums/max-probability built from forecast steps, grouped by the local calendar
/// day of each step in the place's own time zone; day 0 is the local day of `now`.
enum DailyAggregate {
    static func days(_ steps: [ForecastStep], now: Double, days: Int, offset: (Double) -> Int) -> [DailyForecast] {
        func localDay(_ t: Double) -> Int? { ForecastTime.localDay(t, offset: offset(t)) }
        guard days > 0, let today = localDay(now) else { return [] }
        var byDay: [Int: DailyForecast] = [:]
        for step in steps {
            guard let day = localDay(step.time) else { continue }
            let ahead = day - today
            guard ahead >= 0, ahead < days else { continue }
            var entry = byDay[ahead] ?? DailyForecast(daysAhead: ahead, date: Double(day * 86400 - offset(step.time)))
            entry.temperatureMaxCelsius = maxOf(entry.temperatureMaxCelsius, step.temperatureMax)
            entry.temperatureMinCelsius = minOf(entry.temperatureMinCelsius, step.temperatureMin)
            if let amount = step.precipitation {
                entry.precipitationSumMeters = (entry.precipitationSumMeters ?? 0) + amount
            }
            entry.precipitationProbabilityRatio = maxOf(
                entry.precipitationProbabilityRatio,
                step.precipitationProbability)
            entry.windSpeedMaxMetersPerSecond = maxOf(entry.windSpeedMaxMetersPerSecond, step.windSpeed)
            entry.windGustMaxMetersPerSecond = maxOf(entry.windGustMaxMetersPerSecond, step.windGust)
            // The most severe condition of the day; WMO codes grow with severity.
            if let code = step.conditionCode { entry.conditionCode = max(entry.conditionCode ?? code, code) }
            byDay[ahead] = entry
        }
        return byDay.keys.sorted().map { byDay[$0]! }
    }

    /// The largest of `values` that are there; nil when none is (a day of nulls is no sample).
    static func maximum(_ values: [Double?]) -> Double? {
        values.reduce(nil) { maxOf($0, $1) }
    }

    private static func maxOf(_ a: Double?, _ b: Double?) -> Double? {
        guard let b else { return a }
        return max(a ?? b, b)
    }

    private static func minOf(_ a: Double?, _ b: Double?) -> Double? {
        guard let b else { return a }
        return min(a ?? b, b)
    }
}
