/// The app's day view of one place: the current conditions and the next hours, as display
/// strings in the place's units, its local time and the configured notation. A value the provider
/// did not send is `ValueFormat.missing`.
public struct DayViewModel: Sendable {
    /// One line of the current conditions: "Humidity" and "65 %".
    public struct Reading: Sendable, Equatable {
        public let label: String
        public let value: String
    }

    /// One hour ahead.
    public struct Hour: Sendable, Equatable {
        /// Local time of the hour, "15:00" or "3:00 PM".
        public let time: String
        public let icon: String
        public let condition: String
        public let temperature: String
        public let precipitationProbability: String
        public let precipitation: String
        public let wind: String
    }

    public let icon: String
    public let condition: String
    public let temperature: String
    public let feelsLike: String
    /// Humidity, dew point, wind, gusts, pressure, cloud cover, UV index, visibility,
    /// precipitation and when it was observed, in that order.
    public let readings: [Reading]
    /// The next `hours` hours, 1 the next whole hour.
    public let hours: [Hour]

    public init(snapshot: WeatherSnapshot, units: UnitSettings, hours: Int) {
        let current = snapshot.current
        let offsets = snapshot.utcOffsets
        let condition = current.conditionCode.map { WeatherCondition(code: $0, isDay: current.isDay ?? true) }
        icon = condition?.icon ?? "unknown"
        self.condition = condition?.text ?? ValueFormat.missing
        temperature = ValueFormat.temperature(current.temperatureCelsius, units.temperature)
        feelsLike = ValueFormat.temperature(current.apparentTemperatureCelsius, units.temperature)
        let speed = ValueFormat.windSpeed(current.windSpeedMetersPerSecond, units.windSpeed)
        let direction = ValueFormat.windDirection(current.windDirectionDegrees, speed: current.windSpeedMetersPerSecond)
        readings = [
            Reading(label: "Humidity", value: ValueFormat.percent(current.relativeHumidityRatio)),
            Reading(label: "Dew point", value: ValueFormat.temperature(current.dewPointCelsius, units.temperature)),
            Reading(
                label: "Wind",
                value: direction.map { speed + " from " + $0 } ?? speed),
            Reading(label: "Gusts", value: ValueFormat.windSpeed(current.windGustMetersPerSecond, units.windSpeed)),
            Reading(label: "Pressure", value: ValueFormat.pressure(current.pressureMslPascals)),
            Reading(label: "Cloud cover", value: ValueFormat.percent(current.cloudCoverRatio)),
            Reading(label: "UV index", value: ValueFormat.uvIndex(current.uvIndex)),
            Reading(label: "Visibility", value: ValueFormat.visibility(current.visibilityMeters)),
            Reading(label: "Precipitation", value: ValueFormat.precipitation(current.precipitationMeters)),
            Reading(
                label: "Observed at",
                value: ValueFormat.clock(current.observedAt, offsets: offsets, units.time)),
        ]
        self.hours = snapshot.hourly.filter { $0.hoursAhead >= 1 && $0.hoursAhead <= hours }.map { hour in
            let condition = hour.conditionCode.map { WeatherCondition(code: $0) }
            return Hour(
                time: ValueFormat.clock(hour.time, offsets: offsets, units.time),
                icon: condition?.icon ?? "unknown",
                condition: condition?.text ?? ValueFormat.missing,
                temperature: ValueFormat.temperature(hour.temperatureCelsius, units.temperature),
                precipitationProbability: ValueFormat.percent(hour.precipitationProbabilityRatio),
                precipitation: ValueFormat.precipitation(hour.precipitationMeters),
                wind: ValueFormat.windSpeed(hour.windSpeedMetersPerSecond, units.windSpeed))
        }
    }
}
