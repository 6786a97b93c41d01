/// Raw weather for one place, as one provider answered it, in base units:
/// °C, m/s, Pa, metres, ratios 0–1, unix seconds. `nil` means the provider sent no value
/// (JSON `null` or a missing field): such a value becomes no sample, never 0.
public struct WeatherSnapshot: Sendable, Equatable {
    public var current: CurrentConditions
    /// Index 0 is today in the place's own time zone.
    public var daily: [DailyForecast]
    /// Hourly steps, each with its own `hoursAhead` (1 = the next whole hour).
    public var hourly: [HourlyForecast]
    /// The zone the provider reported (IANA name), or the configured one; nil when the answer
    /// named none this machine knows: it becomes a label and decides the days.
    public var timezone: String?
    /// Seconds east of UTC in force when the data was produced.
    public var utcOffsetSeconds: Int
    /// The grid point the provider actually used.
    public var latitude: Double?
    public var longitude: Double?
    /// Official warnings the answer carried (OpenWeatherMap's One Call and Dark Sky `alerts`);
    /// nil when the provider carries none, empty when it carries them and none is in force.
    public var warnings: [WeatherWarning]?

    public init(
        current: CurrentConditions, daily: [DailyForecast] = [], hourly: [HourlyForecast] = [],
        timezone: String? = nil, utcOffsetSeconds: Int = 0, latitude: Double? = nil, longitude: Double? = nil,
        warnings: [WeatherWarning]? = nil
    ) {
        self.current = current
        self.daily = daily
        self.hourly = hourly
        self.timezone = Place.knownTimeZone(timezone)
        self.utcOffsetSeconds = utcOffsetSeconds
        self.latitude = latitude
        self.longitude = longitude
        self.warnings = warnings
    }
}

public struct CurrentConditions: Sendable, Equatable {
    /// When the provider measured (or valid-time of) these values, unix seconds.
    public var observedAt: Double?
    public var temperatureCelsius: Double?
    public var apparentTemperatureCelsius: Double?
    public var dewPointCelsius: Double?
    public var relativeHumidityRatio: Double?
    public var windSpeedMetersPerSecond: Double?
    public var windGustMetersPerSecond: Double?
    public var windDirectionDegrees: Double?
    public var pressureMslPascals: Double?
    public var cloudCoverRatio: Double?
    /// Precipitation over the provider's latest interval.
    public var precipitationMeters: Double?
    public var uvIndex: Double?
    public var visibilityMeters: Double?
    public var isDay: Bool?
    /// WMO weather interpretation code.
    public var conditionCode: Int?

    public init(
        observedAt: Double? = nil, temperatureCelsius: Double? = nil, apparentTemperatureCelsius: Double? = nil,
        dewPointCelsius: Double? = nil, relativeHumidityRatio: Double? = nil, windSpeedMetersPerSecond: Double? = nil,
        windGustMetersPerSecond: Double? = nil, windDirectionDegrees: Double? = nil, pressureMslPascals: Double? = nil,
        cloudCoverRatio: Double? = nil, precipitationMeters: Double? = nil, uvIndex: Double? = nil,
        visibilityMeters: Double? = nil, isDay: Bool? = nil, conditionCode: Int? = nil
    ) {
        self.observedAt = observedAt
        self.temperatureCelsius = temperatureCelsius
        self.apparentTemperatureCelsius = apparentTemperatureCelsius
        self.dewPointCelsius = dewPointCelsius
        self.relativeHumidityRatio = relativeHumidityRatio
        self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
        self.windGustMetersPerSecond = windGustMetersPerSecond
        self.windDirectionDegrees = windDirectionDegrees
        self.pressureMslPascals = pressureMslPascals
        self.cloudCoverRatio = cloudCoverRatio
        self.precipitationMeters = precipitationMeters
        self.uvIndex = uvIndex
        self.visibilityMeters = visibilityMeters
        self.isDay = isDay
        self.conditionCode = conditionCode
    }
}

public struct DailyForecast: Sendable, Equatable {
    /// Days ahead: 0 is today where the place is.
    public var daysAhead: Int
    /// Local midnight of that day, unix seconds.
    public var date: Double?
    public var temperatureMaxCelsius: Double?
    public var temperatureMinCelsius: Double?
    public var precipitationSumMeters: Double?
    public var precipitationProbabilityRatio: Double?
    public var windSpeedMaxMetersPerSecond: Double?
    public var windGustMaxMetersPerSecond: Double?
    public var uvIndexMax: Double?
    public var conditionCode: Int?
    public var sunrise: Double?
    public var sunset: Double?

    public init(
        daysAhead: Int, date: Double? = nil, temperatureMaxCelsius: Double? = nil, temperatureMinCelsius: Double? = nil,
        precipitationSumMeters: Double? = nil, precipitationProbabilityRatio: Double? = nil,
        windSpeedMaxMetersPerSecond: Double? = nil, windGustMaxMetersPerSecond: Double? = nil,
        uvIndexMax: Double? = nil, conditionCode: Int? = nil, sunrise: Double? = nil, sunset: Double? = nil
    ) {
        self.daysAhead = daysAhead
        self.date = date
        self.temperatureMaxCelsius = temperatureMaxCelsius
        self.temperatureMinCelsius = temperatureMinCelsius
        self.precipitationSumMeters = precipitationSumMeters
        self.precipitationProbabilityRatio = precipitationProbabilityRatio
        self.windSpeedMaxMetersPerSecond = windSpeedMaxMetersPerSecond
        self.windGustMaxMetersPerSecond = windGustMaxMetersPerSecond
        self.uvIndexMax = uvIndexMax
        self.conditionCode = conditionCode
        self.sunrise = sunrise
        self.sunset = sunset
    }
}

public struct HourlyForecast: Sendable, Equatable {
    /// Hours ahead: 1 is the next whole hour.
    public var hoursAhead: Int
    /// The hour this step is valid for, unix seconds.
    public var time: Double
    public var temperatureCelsius: Double?
    public var precipitationProbabilityRatio: Double?
    /// Precipitation over the hour before `time`.
    public var precipitationMeters: Double?
    public var windSpeedMetersPerSecond: Double?
    public var conditionCode: Int?

    public init(
        hoursAhead: Int, time: Double, temperatureCelsius: Double? = nil, precipitationProbabilityRatio: Double? = nil,
        precipitationMeters: Double? = nil, windSpeedMetersPerSecond: Double? = nil, conditionCode: Int? = nil
    ) {
        self.hoursAhead = hoursAhead
        self.time = time
        self.temperatureCelsius = temperatureCelsius
        self.precipitationProbabilityRatio = precipitationProbabilityRatio
        self.precipitationMeters = precipitationMeters
        self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
        self.conditionCode = conditionCode
    }
}

extension WeatherSnapshot {
    /// The place's offset from UTC at a moment, for the clock times the pages show: by the rules
    /// of the zone the answer named, else the answer's own offset (in force when it was made).
    var utcOffsets: @Sendable (Double) -> Int { ForecastTime.utcOffsets(zone: timezone, fixed: utcOffsetSeconds) }
}
