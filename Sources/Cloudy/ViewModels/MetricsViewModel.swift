/// Turns one place's weather into metric samples in the units it is *given* — the exporter's
/// counterpart of the app's day and week view models. A metric's name states its unit, so the
/// unit settings decide which families appear: `[celsius, fahrenheit]` yields both.
public struct MetricsViewModel {
    public let status: PlaceStatus
    public let units: UnitSettings
    public let provider: ProviderName
    /// When the page is rendered (unix seconds); decides staleness.
    public let now: Double
    public let staleAfter: Double

    public init(status: PlaceStatus, units: UnitSettings, provider: ProviderName, now: Double, staleAfter: Double) {
        self.status = status
        self.units = units
        self.provider = provider
        self.now = now
        self.staleAfter = staleAfter
    }

    public func addSamples(to page: inout MetricsPage) {
        let place = status.place
        let location = [("location", place.name)]
        page.add(Catalogue.up, labels: location, value: status.isUp ? 1 : 0)
        page.add(Catalogue.lastSuccess, labels: location, value: status.lastSuccess)
        page.add(Catalogue.lastAttempt, labels: location, value: status.lastAttempt)
        if let located = status.location {
            let timezone = located.timezone ?? status.snapshot?.timezone ?? ""
            page.add(Catalogue.locationInfo, labels: [
                ("location", place.name), ("latitude", Self.coordinate(located.latitude)), ("longitude", Self.coordinate(located.longitude)),
                ("timezone", timezone), ("provider", provider.rawValue),
            ], value: 1)
        }

        guard let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter) else { return }
        addCurrent(snapshot.current, location: location, to: &page)
        for day in snapshot.daily {
            addDaily(day, labels: location + [("day", String(day.daysAhead))], to: &page)
        }
        for hour in snapshot.hourly {
            addHourly(hour, labels: location + [("hour", String(hour.hoursAhead))], to: &page)
        }
    }

    private func addCurrent(_ now: CurrentConditions, location: [(String, String)], to page: inout MetricsPage) {
        for unit in units.temperature {
            page.add(Catalogue.temperature(unit), labels: location, value: now.temperatureCelsius.map(unit.fromCelsius))
            page.add(Catalogue.apparentTemperature(unit), labels: location, value: now.apparentTemperatureCelsius.map(unit.fromCelsius))
            page.add(Catalogue.dewPoint(unit), labels: location, value: now.dewPointCelsius.map(unit.fromCelsius))
        }
        for unit in units.windSpeed {
            page.add(Catalogue.windSpeed(unit), labels: location, value: now.windSpeedMetersPerSecond.map(unit.fromMetersPerSecond))
            page.add(Catalogue.windGust(unit), labels: location, value: now.windGustMetersPerSecond.map(unit.fromMetersPerSecond))
        }
        page.add(Catalogue.humidity, labels: location, value: now.relativeHumidityRatio)
        page.add(Catalogue.windDirection, labels: location, value: now.windDirectionDegrees)
        page.add(Catalogue.pressure, labels: location, value: now.pressureMslPascals)
        page.add(Catalogue.cloudCover, labels: location, value: now.cloudCoverRatio)
        page.add(Catalogue.precipitation, labels: location, value: now.precipitationMeters)
        page.add(Catalogue.uvIndex, labels: location, value: now.uvIndex)
        page.add(Catalogue.visibility, labels: location, value: now.visibilityMeters)
        page.add(Catalogue.isDay, labels: location, value: now.isDay.map { $0 ? 1 : 0 })
        page.add(Catalogue.observation, labels: location, value: now.observedAt)
        if let code = now.conditionCode {
            page.add(Catalogue.conditionCode, labels: location, value: Double(code))
            let condition = WeatherCondition(code: code, isDay: now.isDay ?? true)
            page.add(Catalogue.conditionInfo, labels: location + [
                ("code", String(code)), ("condition", condition.text), ("icon", condition.icon),
            ], value: 1)
        }
    }

    private func addDaily(_ day: DailyForecast, labels: [(String, String)], to page: inout MetricsPage) {
        for unit in units.temperature {
            page.add(Catalogue.dailyMax(unit), labels: labels, value: day.temperatureMaxCelsius.map(unit.fromCelsius))
            page.add(Catalogue.dailyMin(unit), labels: labels, value: day.temperatureMinCelsius.map(unit.fromCelsius))
        }
        for unit in units.windSpeed {
            page.add(Catalogue.dailyWind(unit), labels: labels, value: day.windSpeedMaxMetersPerSecond.map(unit.fromMetersPerSecond))
            page.add(Catalogue.dailyGust(unit), labels: labels, value: day.windGustMaxMetersPerSecond.map(unit.fromMetersPerSecond))
        }
        page.add(Catalogue.dailyPrecipitation, labels: labels, value: day.precipitationSumMeters)
        page.add(Catalogue.dailyPrecipitationProbability, labels: labels, value: day.precipitationProbabilityRatio)
        page.add(Catalogue.dailyUV, labels: labels, value: day.uvIndexMax)
        page.add(Catalogue.dailyCondition, labels: labels, value: day.conditionCode.map(Double.init))
        page.add(Catalogue.sunrise, labels: labels, value: day.sunrise)
        page.add(Catalogue.sunset, labels: labels, value: day.sunset)
    }

    private func addHourly(_ hour: HourlyForecast, labels: [(String, String)], to page: inout MetricsPage) {
        for unit in units.temperature {
            page.add(Catalogue.hourlyTemperature(unit), labels: labels, value: hour.temperatureCelsius.map(unit.fromCelsius))
        }
        for unit in units.windSpeed {
            page.add(Catalogue.hourlyWind(unit), labels: labels, value: hour.windSpeedMetersPerSecond.map(unit.fromMetersPerSecond))
        }
        page.add(Catalogue.hourlyPrecipitationProbability, labels: labels, value: hour.precipitationProbabilityRatio)
        page.add(Catalogue.hourlyPrecipitation, labels: labels, value: hour.precipitationMeters)
        page.add(Catalogue.hourlyCondition, labels: labels, value: hour.conditionCode.map(Double.init))
    }

    /// Coordinates as the operator would write them (shortest exact decimal).
    static func coordinate(_ value: Double) -> String { SampleValue.format(value) }
}

/// Every weather family of the contract, with its HELP text. Names are fixed by CONTRACT.md.
public enum Catalogue {
    static let cached = " (cached from the last refresh)"

    static func gauge(_ name: String, _ help: String) -> MetricDescriptor {
        MetricDescriptor(name, .gauge, help + cached)
    }

    static func tempWord(_ unit: TemperatureUnit) -> String { unit == .celsius ? "degrees Celsius" : "degrees Fahrenheit" }
    static func windWord(_ unit: WindSpeedUnit) -> String { unit.rawValue.replacingUnderscores() }

    public static let up = MetricDescriptor("weather_up", .gauge, "1 when the last refresh of this place succeeded, else 0.")
    public static let lastSuccess = MetricDescriptor("weather_last_success_timestamp_seconds", .gauge, "Unix time of the last successful refresh of this place.")
    public static let lastAttempt = MetricDescriptor("weather_last_attempt_timestamp_seconds", .gauge, "Unix time of the last refresh attempt for this place.")
    public static let locationInfo = MetricDescriptor("weather_location_info", .gauge, "Coordinates, time zone and provider of a place; always 1.")

    static func temperature(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_temperature_\(u.rawValue)", "Air temperature at 2 m in \(tempWord(u))") }
    static func apparentTemperature(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_apparent_temperature_\(u.rawValue)", "Feels-like temperature in \(tempWord(u))") }
    static func dewPoint(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_dew_point_\(u.rawValue)", "Dew point at 2 m in \(tempWord(u))") }
    static func windSpeed(_ u: WindSpeedUnit) -> MetricDescriptor { gauge("weather_wind_speed_\(u.rawValue)", "Wind speed at 10 m in \(windWord(u))") }
    static func windGust(_ u: WindSpeedUnit) -> MetricDescriptor { gauge("weather_wind_gust_speed_\(u.rawValue)", "Wind gust speed at 10 m in \(windWord(u))") }
    static let humidity = gauge("weather_relative_humidity_ratio", "Relative humidity at 2 m, 0 to 1")
    static let windDirection = gauge("weather_wind_direction_degrees", "Direction the wind comes from, degrees clockwise from north")
    static let pressure = gauge("weather_pressure_msl_pascals", "Air pressure reduced to mean sea level in pascals")
    static let cloudCover = gauge("weather_cloud_cover_ratio", "Cloud cover, 0 to 1")
    static let precipitation = gauge("weather_precipitation_meters", "Precipitation over the provider's latest interval in meters")
    static let uvIndex = gauge("weather_uv_index", "UV index")
    static let visibility = gauge("weather_visibility_meters", "Visibility in meters")
    static let isDay = gauge("weather_is_day", "1 in daylight, 0 at night")
    static let conditionCode = gauge("weather_condition_code", "Current condition as a WMO weather interpretation code")
    static let conditionInfo = gauge("weather_condition_info", "Current condition in words and as an icon name; always 1")
    static let observation = gauge("weather_observation_timestamp_seconds", "Unix time the provider measured the current conditions")

    static func dailyMax(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_forecast_daily_temperature_max_\(u.rawValue)", "Forecast daily maximum temperature in \(tempWord(u)); day is days ahead, 0 today in the place's time zone") }
    static func dailyMin(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_forecast_daily_temperature_min_\(u.rawValue)", "Forecast daily minimum temperature in \(tempWord(u)); day is days ahead, 0 today in the place's time zone") }
    static func dailyWind(_ u: WindSpeedUnit) -> MetricDescriptor { gauge("weather_forecast_daily_wind_speed_max_\(u.rawValue)", "Forecast daily maximum wind speed in \(windWord(u))") }
    static func dailyGust(_ u: WindSpeedUnit) -> MetricDescriptor { gauge("weather_forecast_daily_wind_gust_speed_max_\(u.rawValue)", "Forecast daily maximum wind gust speed in \(windWord(u))") }
    static let dailyPrecipitation = gauge("weather_forecast_daily_precipitation_sum_meters", "Forecast daily precipitation sum in meters")
    static let dailyPrecipitationProbability = gauge("weather_forecast_daily_precipitation_probability_ratio", "Forecast daily maximum precipitation probability, 0 to 1")
    static let dailyUV = gauge("weather_forecast_daily_uv_index_max", "Forecast daily maximum UV index")
    static let dailyCondition = gauge("weather_forecast_daily_condition_code", "Forecast daily condition as a WMO weather interpretation code")
    static let sunrise = gauge("weather_forecast_daily_sunrise_timestamp_seconds", "Unix time of sunrise on that day")
    static let sunset = gauge("weather_forecast_daily_sunset_timestamp_seconds", "Unix time of sunset on that day")

    static func hourlyTemperature(_ u: TemperatureUnit) -> MetricDescriptor { gauge("weather_forecast_hourly_temperature_\(u.rawValue)", "Forecast temperature in \(tempWord(u)); hour is hours ahead, 1 the next whole hour") }
    static func hourlyWind(_ u: WindSpeedUnit) -> MetricDescriptor { gauge("weather_forecast_hourly_wind_speed_\(u.rawValue)", "Forecast wind speed in \(windWord(u))") }
    static let hourlyPrecipitationProbability = gauge("weather_forecast_hourly_precipitation_probability_ratio", "Forecast probability of precipitation in the hour, 0 to 1")
    static let hourlyPrecipitation = gauge("weather_forecast_hourly_precipitation_meters", "Forecast precipitation over the hour before in meters")
    static let hourlyCondition = gauge("weather_forecast_hourly_condition_code", "Forecast condition as a WMO weather interpretation code")
}

extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}
