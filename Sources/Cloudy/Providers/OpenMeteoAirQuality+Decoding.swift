/// One place's air-quality answer, read into typed series like the forecast's
/// (`OpenMeteoForecast`): variables the API adds are skipped, a variable it drops is nil, and
/// every value may be null (pollen outside Europe), which is no sample.
// Properties carry the API's own JSON field names, as the readers' cases spell them.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OpenMeteoAirQualityAnswer {
    typealias Values = OpenMeteoForecast.Values

    var utc_offset_seconds: Int? = nil
    /// The zone the answer's days are in: the place's, or the one `timezone=auto` found.
    var timezone: String? = nil
    /// Units by variable: every one is a string, so a dictionary reads them all.
    var current_units: [String: String]? = nil
    var current: Current? = nil
    var hourly_units: [String: String]? = nil
    var hourly: Hourly? = nil
    var error: Bool? = nil
    var reason: String? = nil

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Current {
        var time: Double? = nil
        var european_aqi: Double? = nil
        var us_aqi: Double? = nil
        var pm2_5: Double? = nil
        var pm10: Double? = nil
        var ozone: Double? = nil
        var nitrogen_dioxide: Double? = nil
        var sulphur_dioxide: Double? = nil
        var carbon_monoxide: Double? = nil

        subscript(pollutant: Pollutant) -> Double? {
            switch pollutant {
            case .pm25: return pm2_5
            case .pm10: return pm10
            case .ozone: return ozone
            case .nitrogenDioxide: return nitrogen_dioxide
            case .sulphurDioxide: return sulphur_dioxide
            case .carbonMonoxide: return carbon_monoxide
            }
        }
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Hourly {
        var time: Values? = nil
        var european_aqi: Values? = nil
        var us_aqi: Values? = nil
        var alder_pollen: Values? = nil
        var birch_pollen: Values? = nil
        var grass_pollen: Values? = nil
        var mugwort_pollen: Values? = nil
        var olive_pollen: Values? = nil
        var ragweed_pollen: Values? = nil

        subscript(plant: Plant) -> Values? {
            switch plant {
            case .alder: return alder_pollen
            case .birch: return birch_pollen
            case .grass: return grass_pollen
            case .mugwort: return mugwort_pollen
            case .olive: return olive_pollen
            case .ragweed: return ragweed_pollen
            }
        }
    }

    /// The report this answer gives, or why it gives none (an error entry, no current or hourly
    /// section). Days are local days in `zone` (the place's `timezone:`), else in the answer's
    /// zone, following daylight saving: `utc_offset_seconds` is the offset of now only.
    func report(forecast: ForecastSettings, zone: String?) -> Result<AirQualityReport, WeatherFetchError> {
        let source = OpenMeteoAirQuality.sourceName
        if let reason, error == true { return .failure(WeatherFetchError("\(source): " + String(reason.prefix(200)))) }
        guard let current else { return .failure(WeatherFetchError("\(source): answer lacks the current section")) }
        let now = current.time
        var report = AirQualityReport(
            observedAt: now, indices: AirQualityIndices(european: current.european_aqi, epa: current.us_aqi))
        for pollutant in Pollutant.allCases {
            report.concentrations[pollutant] = current[pollutant].flatMap {
                Self.gramsPerCubicMeter($0, declared: current_units?[pollutant.rawValue])
            }
        }
        // Always asked for (the hourly indices and all the pollen): an answer without it would
        // drop them while the place stayed up.
        guard let times = hourly?.time?.values else {
            return .failure(WeatherFetchError("\(source): answer lacks the hourly section"))
        }
        if let problem = hourly?.misalignment("hourly") {
            return .failure(WeatherFetchError("\(source): answer's " + problem))
        }
        let offsetAt = ForecastTime.steady(
            ForecastTime.utcOffsets(zone: zone ?? timezone, fixed: WeatherAPI.plausibleOffset(utc_offset_seconds)),
            from: times.lazy.compactMap { $0 }.min(), to: times.lazy.compactMap { $0 }.max())
        // Without the current time no hour or day can be placed: the pollen, the hours and the
        // days would go while the place stayed up.
        guard let now, let today = ForecastTime.localDay(now, offset: offsetAt(now)) else {
            return .failure(WeatherFetchError("\(source): answer's current section has no time"))
        }
        let hours = steps(times, now: now, today: today, offsetAt: offsetAt)
        for plant in Plant.allCases {
            report.pollen[plant] = hours.first { $0.ahead == 0 }.flatMap { pollen(plant, at: $0.index) }
        }
        report.hourly = hours.filter { $0.ahead >= 1 && $0.ahead <= forecast.hours }.map {
            HourlyAirQuality(hoursAhead: $0.ahead, time: $0.time, indices: indices(at: $0.index))
        }
        report.daily = dailyMaxima(hours, days: forecast.days, today: today)
        return .success(report)
    }

    /// One hourly step: its index in the series, time, hours ahead of the current whole hour
    /// and local day ahead of today, and whether it is its day's last hour.
    struct Step {
        let index: Int
        let time: Double
        let ahead: Int
        let day: Int
        let endsDay: Bool
    }

    /// The hourly steps of `times`; `today` is `now`'s local day (days since 1970-01-01). Hours
    /// ahead count from now's whole local hour; each step's day is in the offset at its time.
    private func steps(_ times: [Double?], now: Double, today: Int, offsetAt: (Double) -> Int) -> [Step] {
        let offset = offsetAt(now)
        return times.enumerated().compactMap { index, time in
            guard let time, let ahead = ForecastTime.hoursAhead(time, now: now, offset: offset),
                let day = ForecastTime.localDay(time, offset: offsetAt(time))
            else { return nil }
            let next = ForecastTime.localDay(time + 3600, offset: offsetAt(time + 3600)) ?? day
            return Step(index: index, time: time, ahead: ahead, day: day - today, endsDay: next > day)
        }
    }

    private static func value(_ series: Values?, at index: Int) -> Double? {
        guard let values = series?.values, index < values.count else { return nil }
        return values[index]
    }

    private func indices(at index: Int) -> AirQualityIndices {
        AirQualityIndices(
            european: Self.value(hourly?.european_aqi, at: index), epa: Self.value(hourly?.us_aqi, at: index))
    }

    private func pollen(_ plant: Plant, at index: Int) -> Double? {
        // Grains per cubic metre is the API's only pollen unit; anything else is not trusted.
        guard hourly_units?[plant.rawValue + "_pollen"].map({ $0 == "grains/m³" }) ?? true else { return nil }
        return Self.value(hourly?[plant], at: index)
    }

    /// The largest value of each local day 0…`days` − 1, over the whole day as the answer holds
    /// it (it starts at local midnight, so today's maximum includes the hours already past). A
    /// later day gets a series' maximum only when the series is known to its end (its last hour,
    /// or later): pollen past the model run's last day is null after its first hours, and a
    /// maximum of those would stand for the day, as `DailyAggregate` leaves out for the weather.
    private func dailyMaxima(_ steps: [Step], days: Int, today: Int) -> [DailyAirQuality] {
        /// Whether the series `value` reads is known to the end of local day `day`.
        func reachesEnd(_ value: (Int) -> Double?) -> (Int) -> Bool {
            guard let last = steps.last(where: { value($0.index) != nil }) else { return { $0 == 0 } }
            return { day in day == 0 || last.day > day || (last.day == day && last.endsDay) }
        }
        let european = reachesEnd { self.indices(at: $0).european }
        let epa = reachesEnd { self.indices(at: $0).epa }
        let plants = Dictionary(
            uniqueKeysWithValues: Plant.allCases.map { plant in (plant, reachesEnd { self.pollen(plant, at: $0) }) })
        return (0..<max(0, days)).compactMap { day in
            let inDay = steps.filter { $0.day == day }
            guard !inDay.isEmpty else { return nil }
            let indices = inDay.map { self.indices(at: $0.index) }
            var entry = DailyAirQuality(
                daysAhead: day, localDay: today + day,
                indicesMax: AirQualityIndices(
                    european: european(day) ? DailyAggregate.maximum(indices.map(\.european)) : nil,
                    epa: epa(day) ? DailyAggregate.maximum(indices.map(\.epa)) : nil))
            for plant in Plant.allCases where plants[plant]?(day) == true {
                entry.pollenMax[plant] = DailyAggregate.maximum(inDay.map { pollen(plant, at: $0.index) })
            }
            return entry
        }
    }

    /// A concentration in its declared unit as g/m³; nil for a unit Cloudy does not know
    /// (the API's is `μg/m³` with a Greek mu; the micro sign is accepted too).
    static func gramsPerCubicMeter(_ value: Double, declared: String?) -> Double? {
        switch declared {
        case nil, "μg/m³", "µg/m³": return Pollutant.gramsPerCubicMeter(micrograms: value)
        default: return nil
        }
    }
}

/// The air-quality answer read field by field, as the forecast's (`OpenMeteoForecast+Reading.swift`).
extension OpenMeteoAirQualityAnswer: JSONReadable {
    init(json: inout JSONReader) throws {
        var answer = Self()
        try json.readObject { key, json in
            switch key {
            case "utc_offset_seconds": answer.utc_offset_seconds = try json.readOptional(Int.self)
            case "timezone": answer.timezone = try json.readOptional(String.self)
            case "current_units": answer.current_units = try json.readOptional([String: String].self)
            case "current": answer.current = try json.readOptional(Current.self)
            case "hourly_units": answer.hourly_units = try json.readOptional([String: String].self)
            case "hourly": answer.hourly = try json.readOptional(Hourly.self)
            case "error": answer.error = try json.readOptional(Bool.self)
            case "reason": answer.reason = try json.readOptional(String.self)
            default: try json.skipValue()
            }
        }
        self = answer
    }
}

extension OpenMeteoAirQualityAnswer.Current: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, Double?> & Sendable)] = [
        ("time", \.time),
        ("european_aqi", \.european_aqi),
        ("us_aqi", \.us_aqi),
        ("pm2_5", \.pm2_5),
        ("pm10", \.pm10),
        ("ozone", \.ozone),
        ("nitrogen_dioxide", \.nitrogen_dioxide),
        ("sulphur_dioxide", \.sulphur_dioxide),
        ("carbon_monoxide", \.carbon_monoxide),
    ]
}

extension OpenMeteoAirQualityAnswer.Hourly: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, OpenMeteoForecast.Values?> & Sendable)] = [
        ("time", \.time),
        ("european_aqi", \.european_aqi),
        ("us_aqi", \.us_aqi),
        ("alder_pollen", \.alder_pollen),
        ("birch_pollen", \.birch_pollen),
        ("grass_pollen", \.grass_pollen),
        ("mugwort_pollen", \.mugwort_pollen),
        ("olive_pollen", \.olive_pollen),
        ("ragweed_pollen", \.ragweed_pollen),
    ]
}
