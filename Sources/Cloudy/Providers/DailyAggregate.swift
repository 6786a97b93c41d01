/// One forecast step of a provider without daily values, for `DailyAggregate`.
struct ForecastStep {
    var time: Double
    var temperatureMin: Double?
    var temperatureMax: Double?
    /// Precipitation of this step's period, metres.
    var precipitation: Double?
    /// The seconds that period covers from `time`: back (negative: OpenWeatherMap's `rain.3h`
    /// is the 3 hours before its step) or forward (MET's `next_6_hours`); 0 at the step.
    var precipitationSpan: Double = 0
    var precipitationProbability: Double?
    var windSpeed: Double?
    var windGust: Double?
    var conditionCode: Int?
    /// A piece of a period's amount between the steps (MET's six hours after the last hourly
    /// step): only its precipitation counts, no values and no step of the series.
    var onlyPrecipitation = false
}

/// Daily min/max/sums/max-probability built from forecast steps, grouped by the local calendar
/// day of each step in the place's own time zone; day 0 is the local day of `now`. A step's
/// precipitation goes to the days its period covers, shared by the time in each
/// (`precipitationSpan`): rain that OpenWeatherMap reports at 00:00 fell the evening before.
///
/// A later day the steps stop describing before its midnight is left out: OpenWeatherMap's five
/// days of 3-hour steps end at the hour of the request five days on, and a "high" or rain sum of
/// that day's early hours would be shown and compared with thresholds as if it were the day's.
/// Day 0 is what is left of today, as documented, and always kept.
enum DailyAggregate {
    static func days(_ steps: [ForecastStep], now: Double, days: Int, offset: (Double) -> Int) -> [DailyForecast] {
        func localDay(_ t: Double) -> Int? { ForecastTime.localDay(t, offset: offset(t)) }
        guard days > 0, let today = localDay(now) else { return [] }
        var byDay: [Int: DailyForecast] = [:]
        /// Changes the entry of the day `time` falls on, when that day is one asked for.
        func update(at time: Double, _ change: (inout DailyForecast) -> Void) {
            guard let day = localDay(time), day - today >= 0, day - today < days else { return }
            var entry =
                byDay[day - today] ?? DailyForecast(daysAhead: day - today, date: Double(day * 86400 - offset(time)))
            change(&entry)
            byDay[day - today] = entry
        }
        var seen = Set<Double>()
        // A step repeated counts once.
        for step in steps where step.onlyPrecipitation || seen.insert(step.time).inserted {
            if !step.onlyPrecipitation {
                update(at: step.time) { entry in
                    entry.temperatureMaxCelsius = maxOf(entry.temperatureMaxCelsius, step.temperatureMax)
                    entry.temperatureMinCelsius = minOf(entry.temperatureMinCelsius, step.temperatureMin)
                    entry.precipitationProbabilityRatio = maxOf(
                        entry.precipitationProbabilityRatio, step.precipitationProbability)
                    entry.windSpeedMaxMetersPerSecond = maxOf(entry.windSpeedMaxMetersPerSecond, step.windSpeed)
                    entry.windGustMaxMetersPerSecond = maxOf(entry.windGustMaxMetersPerSecond, step.windGust)
                    // The most severe condition of the day; WMO codes grow with severity.
                    if let code = step.conditionCode { entry.conditionCode = max(entry.conditionCode ?? code, code) }
                }
            }
            guard let amount = step.precipitation else { continue }
            for (time, share) in pieces(of: step, localDay: localDay, offset: offset) {
                update(at: time) { entry in
                    entry.precipitationSumMeters = (entry.precipitationSumMeters ?? 0) + amount * share
                }
            }
        }
        // A day is whole when the steps reach into the next: the local day of the reach itself,
        // so a day that ends at a change of offset (clocks moved at midnight) ends where the zone
        // says.
        let reachedDay = localDay(reach(of: steps)) ?? today
        return byDay.keys.sorted().compactMap { ahead in
            ahead == 0 || today + ahead < reachedDay ? byDay[ahead] : nil
        }
    }

    /// Until when the steps describe the weather, in every value a day is built from:
    /// - the values at the steps (temperature, wind): to the last step and the spacing the series
    ///   has there (a 3-hourly series' last step stands for its 3 hours; a lone step for itself);
    /// - the amounts: to the end of the last period with one. OpenWeatherMap's `rain.3h` looks
    ///   back, so no amount covers the hours after its last step; MET's last step has no period.
    private static func reach(of steps: [ForecastStep]) -> Double {
        var last = -Double.infinity
        var before = -Double.infinity
        var amounts = -Double.infinity
        for step in steps {
            if step.precipitation != nil { amounts = max(amounts, step.time, step.time + step.precipitationSpan) }
            guard !step.onlyPrecipitation, step.time != last else { continue }
            if step.time > last {
                (last, before) = (step.time, last)
            } else if step.time > before {
                before = step.time
            }
        }
        let values = before.isFinite ? last + (last - before) : last
        return amounts.isFinite ? min(values, amounts) : values
    }

    /// Where the step's precipitation falls: a moment in each local day its period covers, with
    /// that day's share of the period (1 for the whole amount, exactly, when the period is in one
    /// day, as it mostly is). Days end at local midnight, also in a zone off by a half hour.
    private static func pieces(
        of step: ForecastStep, localDay: (Double) -> Int?, offset: (Double) -> Int
    ) -> [(time: Double, share: Double)] {
        let start = min(step.time, step.time + step.precipitationSpan)
        let end = max(step.time, step.time + step.precipitationSpan)
        guard end > start else { return [(step.time, 1)] }
        var pieces: [(time: Double, share: Double)] = []
        var from = start
        while from < end, pieces.count < 3 {
            guard let day = localDay(from) else { return [] }
            let midnight = Double((day + 1) * 86400 - offset(from))
            let to = midnight > from ? min(end, midnight) : end
            pieces.append(((from + to) / 2, (to - from) / (end - start)))
            from = to
        }
        return pieces.count == 1 ? [(pieces[0].time, 1)] : pieces
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
