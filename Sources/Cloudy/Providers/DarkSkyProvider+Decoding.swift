import Foundation

/// Dark Sky answers (`units=si`) read into a snapshot: `currently` is the current conditions,
/// `hourly` the hourly steps (hour 1 the next whole hour), `daily` the days (day 0 today in the
/// answer's zone), `alerts` the warnings. Missing values are -999 in this API, never null: they
/// are no value too.
extension DarkSkyProvider {
    public static func decode(
        _ body: [UInt8], place: Place, settings: ForecastSettings
    ) -> Result<WeatherSnapshot, WeatherFetchError> {
        WeatherAPI.decode(DarkSkyAnswer.self, from: body, as: "dark-sky: answer").flatMap {
            $0.snapshot(place: place, settings: settings)
        }
    }
}

struct DarkSkyAnswer: Decodable {
    struct Block: Decodable { let data: [DarkSkyPoint]? }
    let latitude, longitude: Double?
    let timezone: String?
    /// Hours east of UTC, a fraction for some zones.
    let offset: Double?
    let currently: DarkSkyPoint?
    let hourly: Block?
    let daily: Block?
    let alerts: [DarkSkyAlert]?
    /// The units the answer is in (`flags.units`): `si` as asked, or the API's default `us`
    /// (°F, mph, miles, inches) from a mirror or proxy that dropped the query.
    let units: String?
    /// What a gateway error carries; Pirate Weather once answered such errors with a 200.
    let message, detail: String?

    enum CodingKeys: String, CodingKey {
        case latitude, longitude, timezone, offset, currently, hourly, daily, alerts, flags, message, detail
    }

    private struct Flags: Decodable { let units: String? }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        latitude = try? container.decodeIfPresent(Double.self, forKey: .latitude)
        longitude = try? container.decodeIfPresent(Double.self, forKey: .longitude)
        timezone = try? container.decodeIfPresent(String.self, forKey: .timezone)
        offset = try? container.decodeIfPresent(Double.self, forKey: .offset)
        currently = try container.decodeIfPresent(DarkSkyPoint.self, forKey: .currently)
        hourly = try container.decodeIfPresent(Block.self, forKey: .hourly)
        daily = try container.decodeIfPresent(Block.self, forKey: .daily)
        alerts = try? container.decodeIfPresent([DarkSkyAlert].self, forKey: .alerts)
        units = (try? container.decodeIfPresent(Flags.self, forKey: .flags))?.units
        message = try? container.decodeIfPresent(String.self, forKey: .message)
        detail = try? container.decodeIfPresent(String.self, forKey: .detail)
    }

    /// The snapshot of this answer, or which section it lacks (a current section without a
    /// time counts as lacking; an error body answered with 200 is that error).
    func snapshot(place: Place, settings: ForecastSettings) -> Result<WeatherSnapshot, WeatherFetchError> {
        if currently == nil, let text = message ?? detail {
            return .failure(WeatherFetchError("dark-sky: the answer is an error: \(text.prefix(200))"))
        }
        if let units, units != "si" {
            // Read as SI, °F would pass for °C and mph for m/s: no value is better than that.
            return .failure(
                WeatherFetchError(
                    "dark-sky: the answer is in units=\(units.prefix(20)), not the si asked for "
                        + "(does a proxy or mirror drop the query?)"))
        }
        let observed = currently.flatMap { point in point.time.map { (point, $0) } }
        let sections = WeatherAPI.requireSections(
            of: "dark-sky: answer", current: observed, hourly: hourly?.data != nil, daily: daily?.data != nil,
            settings: settings)
        return sections.map { current, now in
            let offset = WeatherAPI.plausibleOffset(self.offset.flatMap { ForecastTime.wholeNumber($0 * 3600) })
            let days = dailySteps(
                now: now, offset: ForecastTime.utcOffsets(zone: place.timezone, fixed: offset), days: settings.days)
            var snapshot = WeatherSnapshot(
                current: current.conditions(observedAt: now, today: days.first { $0.daysAhead == 0 }),
                timezone: place.timezone ?? timezone, utcOffsetSeconds: offset,
                latitude: latitude, longitude: longitude,
                warnings: DarkSkyAlert.warnings(alerts ?? []))
            snapshot.hourly = hourlySteps(now: now, hours: settings.hours)
            snapshot.daily = days
            return snapshot
        }
    }

    /// Hours 1…`hours` ahead of `now`. Dark Sky's precipitation intensity is the hour's rate
    /// from its step onwards; Cloudy's hourly amount looks back over the hour before, so hour h
    /// takes the intensity of the step an hour earlier (absent when the answer has none).
    func hourlySteps(now: Double, hours: Int) -> [HourlyForecast] {
        let points = (hourly?.data ?? []).filter { $0.time != nil }
        var intensityBefore: [Double: Double] = [:]
        for point in points {
            if let time = point.time, let intensity = point.precipIntensity { intensityBefore[time + 3600] = intensity }
        }
        return points.compactMap { point in
            guard let time = point.time, let ahead = ForecastTime.hoursAhead(time, now: now), ahead >= 1,
                ahead <= hours
            else { return nil }
            return HourlyForecast(
                hoursAhead: ahead, time: time, temperatureCelsius: point.temperature,
                precipitationProbabilityRatio: point.precipProbability,
                precipitationMeters: intensityBefore[time].map { $0 / 1000 },
                windSpeedMetersPerSecond: point.windSpeed, conditionCode: point.conditionCode)
        }
    }

    /// Days 0…`days` − 1, counted in the place's zone (`offset` at each moment). Each day is
    /// stamped at its local midnight, which can sit an hour off across a daylight-saving change:
    /// its local noon gives the day safely.
    func dailySteps(now: Double, offset: (Double) -> Int, days: Int) -> [DailyForecast] {
        guard let today = ForecastTime.localDay(now, offset: offset(now)) else { return [] }
        return (daily?.data ?? []).compactMap { point in
            guard let time = point.time, let date = ForecastTime.localDay(time + 43_200, offset: offset(time + 43_200)),
                date - today >= 0, date - today < days
            else { return nil }
            // The day's mean intensity (mm/h of liquid water) over its hours (24; 23 or 25 when
            // the clocks change that day): the whole day's amount, to a micrometre (0.38 × 24 is
            // 9.120000000000001 in binary: the page would show the noise). Pirate Weather's
            // accumulations count only the rest of today, and the original Dark Sky's
            // `precipAccumulation` was snowfall depth, not water.
            let hours = Double(86_400 + offset(time) - offset(time + 86_400)) / 3600
            return DailyForecast(
                daysAhead: date - today, date: time,
                temperatureMaxCelsius: point.temperatureMax, temperatureMinCelsius: point.temperatureMin,
                precipitationSumMeters: point.precipIntensity.map { ($0 * hours * 1000).rounded() / 1_000_000 },
                precipitationProbabilityRatio: point.precipProbability,
                uvIndexMax: point.uvIndex, conditionCode: point.conditionCode,
                sunrise: point.sunriseTime, sunset: point.sunsetTime)
        }
    }
}

/// One data point of `currently`, `hourly` or `daily`, read leniently: a field that is absent,
/// null, -999 (Dark Sky's "no value") or not a number is nil, and the rest of the point stays.
struct DarkSkyPoint: Decodable {
    let time, temperature, apparentTemperature, dewPoint, humidity, pressure: Double?
    let windSpeed, windGust, windBearing, cloudCover, uvIndex, visibility: Double?
    let precipIntensity, precipProbability, temperatureMin, temperatureMax, sunriseTime, sunsetTime: Double?
    let icon, summary: String?

    enum CodingKeys: String, CodingKey {
        case time, temperature, apparentTemperature, dewPoint, humidity, pressure
        case windSpeed, windGust, windBearing, cloudCover, uvIndex, visibility
        case precipIntensity, precipProbability, temperatureMin, temperatureMax, sunriseTime, sunsetTime
        case icon, summary
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func number(_ key: CodingKeys) -> Double? {
            guard let value = try? container.decodeIfPresent(Double.self, forKey: key), value.isFinite,
                value != -999
            else { return nil }
            return value
        }
        time = number(.time)
        temperature = number(.temperature)
        apparentTemperature = number(.apparentTemperature)
        dewPoint = number(.dewPoint)
        humidity = number(.humidity)
        pressure = number(.pressure)
        windSpeed = number(.windSpeed)
        windGust = number(.windGust)
        windBearing = number(.windBearing)
        cloudCover = number(.cloudCover)
        uvIndex = number(.uvIndex)
        visibility = number(.visibility)
        precipIntensity = number(.precipIntensity)
        precipProbability = number(.precipProbability)
        temperatureMin = number(.temperatureMin)
        temperatureMax = number(.temperatureMax)
        sunriseTime = number(.sunriseTime)
        sunsetTime = number(.sunsetTime)
        icon = try? container.decodeIfPresent(String.self, forKey: .icon)
        summary = try? container.decodeIfPresent(String.self, forKey: .summary)
    }

    /// The point's `icon` and `summary` as a WMO code.
    var conditionCode: Int? { icon.flatMap { ConditionMapping.wmo(darkSkyIcon: $0, summary: summary) } }

    /// The current conditions in base units: hPa → Pa, km → m, the hour's precipitation at the
    /// current intensity (mm/h) in metres. Day or night from the icon, else from today's sun.
    func conditions(observedAt now: Double, today: DailyForecast?) -> CurrentConditions {
        var isDay = icon.flatMap(ConditionMapping.isDay(darkSkyIcon:))
        if isDay == nil, let sunrise = today?.sunrise, let sunset = today?.sunset {
            isDay = now >= sunrise && now < sunset
        }
        return CurrentConditions(
            observedAt: now,
            temperatureCelsius: temperature,
            apparentTemperatureCelsius: apparentTemperature,
            dewPointCelsius: dewPoint,
            relativeHumidityRatio: humidity,
            windSpeedMetersPerSecond: windSpeed,
            windGustMetersPerSecond: windGust,
            windDirectionDegrees: windBearing,
            pressureMslPascals: pressure.map { $0 * 100 },
            cloudCoverRatio: cloudCover,
            precipitationMeters: precipIntensity.map { $0 / 1000 },
            uvIndex: uvIndex,
            visibilityMeters: visibility.map { $0 * 1000 },
            isDay: isDay,
            conditionCode: conditionCode
        )
    }
}

/// One entry of `alerts`: US alerts from the NWS, others from WMO feeds. Read leniently, like the
/// data points: a damaged alert keeps the weather.
struct DarkSkyAlert: Decodable {
    let title, severity, description, uri: String?
    let time, expires: Double?
    /// The zones the alert is for (US: counties and forecast zones).
    let regions: [String]?

    enum CodingKeys: String, CodingKey { case title, severity, description, uri, time, expires, regions }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try? container.decodeIfPresent(String.self, forKey: .title)
        severity = try? container.decodeIfPresent(String.self, forKey: .severity)
        description = try? container.decodeIfPresent(String.self, forKey: .description)
        uri = try? container.decodeIfPresent(String.self, forKey: .uri)
        // -999 (or any time before 1970) is no time: an `expires` without one is open-ended.
        time = (try? container.decodeIfPresent(Double.self, forKey: .time)).flatMap { $0 > 0 ? $0 : nil }
        expires = (try? container.decodeIfPresent(Double.self, forKey: .expires)).flatMap { $0 > 0 ? $0 : nil }
        regions = try? container.decodeIfPresent([String].self, forKey: .regions)
    }

    /// Pirate Weather sends CAP's words (`Moderate`); the original Dark Sky sent `advisory`,
    /// `watch` and `warning`, read as minor, moderate and severe (an advisory is for nuisance
    /// weather, a watch says a hazard may come, a warning that it is coming or under way).
    static func severity(_ word: String?) -> WarningSeverity {
        switch word.map(WeatherWarning.capWord) {
        case "advisory": return .minor
        case "watch": return .moderate
        case "warning": return .severe
        default: return WarningSeverity(cap: word ?? "")
        }
    }

    /// The answer's alerts as warnings, each once (duplicates have been seen). The id is the
    /// alert's `uri` (a CAP message's, outside the US), else its title and start, with its
    /// regions' digest when it names regions (two Flood Warnings from one hour for two zones
    /// are two alerts): a US alert links the place's forecast page on forecast.weather.gov, the
    /// same for every alert there, so its id must not depend on which other alerts the answer
    /// holds. A `uri` that another alert shares is no alert's own either.
    static func warnings(_ alerts: [DarkSkyAlert]) -> [WeatherWarning] {
        let usable = alerts.filter { $0.title?.isEmpty == false }
        let uriCounts = Dictionary(usable.compactMap(\.uri).map { ($0, 1) }, uniquingKeysWith: +)
        var seen = Set<String>()
        return usable.compactMap { alert in
            let title = alert.title ?? ""
            let start = alert.time.flatMap(ForecastTime.wholeNumber).map { String($0) } ?? "-"
            let ownURI = alert.uri.flatMap { !$0.isEmpty && !isForecastPage($0) && uriCounts[$0] == 1 ? $0 : nil }
            let id = ownURI ?? "\(title)@\(start)" + regionsDigest(alert.regions)
            guard seen.insert(id).inserted else { return nil }
            return WeatherWarning(
                id: id, source: ProviderName.darkSky.rawValue, event: title, severity: severity(alert.severity),
                headline: title, description: alert.description ?? "", onset: alert.time, expires: alert.expires)
        }
    }

    /// "#" and the first 8 hex digits of the SHA-256 of `regions` (one per line, in order), or ""
    /// for none: a short mark that tells apart alerts of one title and hour for other zones.
    static func regionsDigest(_ regions: [String]?) -> String {
        guard let regions, !regions.isEmpty else { return "" }
        let digest = SHA256.digest(Array(regions.joined(separator: "\n").utf8))
        return "#" + digest.prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Whether `uri` is a place's forecast page on the NWS site (what Pirate Weather links every
    /// US alert to), not an alert's own.
    static func isForecastPage(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        return lower.hasPrefix("https://forecast.weather.gov/") || lower.hasPrefix("http://forecast.weather.gov/")
    }
}
