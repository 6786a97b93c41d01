/// The app's week view of one place: one row a day, named `Today`, `Tomorrow`, then by weekday
/// in the place's own calendar, with values in its units and times in its local time and the
/// configured notation. A value the provider did not send is `ValueFormat.missing`.
public struct WeekViewModel: Sendable {
    public struct Day: Sendable, Equatable {
        public let name: String
        public let icon: String
        public let condition: String
        public let low: String
        public let high: String
        public let precipitation: String
        public let precipitationProbability: String
        public let wind: String
        public let gusts: String
        public let uvIndex: String
        public let sunrise: String
        public let sunset: String
        /// The place's alert thresholds this day's forecast crosses; empty for most days.
        public let crossings: [ThresholdCrossing]
        /// The crossings' titles for the week table's cell, "Frost, Storm gusts"; "" when none.
        public let marks: String
        /// "crossed" for a day with crossings, for the row's class; nil otherwise.
        public let rowClass: String?
    }

    public let days: [Day]

    /// The days whose forecast crosses a threshold: what the day view lists, with the details.
    public var crossingDays: [Day] { days.filter { !$0.crossings.isEmpty } }

    /// Day 0 is today where the place is, as on `/metrics` (`day="0"`); the weekdays after
    /// `Tomorrow` are those of the days' own dates (local midnight, sent by the provider) in the
    /// place's time zone, or count on from the place's date at `now` (unix seconds) when the
    /// provider sent no dates. Days are marked against `thresholds`, the place's own, the
    /// air-quality one against the `airQuality` day of the same date.
    public init(
        snapshot: WeatherSnapshot, airQuality: [DailyAirQuality] = [], units: UnitSettings,
        thresholds: AlertThresholds, now: Double
    ) {
        let offsets = snapshot.utcOffsets
        let today = Self.localToday(snapshot, now: now)
        days = snapshot.daily.map { day in
            let condition = day.conditionCode.map { WeatherCondition(code: $0) }
            let air = Self.airQuality(on: day, today: today, in: airQuality)
            let crossings = ThresholdCrossing.of(day, air: air, thresholds: thresholds, units: units)
            return Day(
                name: ValueFormat.dayName(today + day.daysAhead, today: today),
                icon: condition?.icon ?? "unknown",
                condition: condition?.text ?? ValueFormat.missing,
                low: ValueFormat.temperature(day.temperatureMinCelsius, units.temperature),
                high: ValueFormat.temperature(day.temperatureMaxCelsius, units.temperature),
                precipitation: ValueFormat.precipitation(day.precipitationSumMeters),
                precipitationProbability: ValueFormat.percent(day.precipitationProbabilityRatio),
                wind: ValueFormat.windSpeed(day.windSpeedMaxMetersPerSecond, units.windSpeed),
                gusts: ValueFormat.windSpeed(day.windGustMaxMetersPerSecond, units.windSpeed),
                uvIndex: ValueFormat.uvIndex(day.uvIndexMax),
                sunrise: ValueFormat.clock(day.sunrise, offsets: offsets, units.time),
                sunset: ValueFormat.clock(day.sunset, offsets: offsets, units.time),
                crossings: crossings,
                marks: crossings.map(\.title).joined(separator: ", "),
                rowClass: crossings.isEmpty ? nil : "crossed")
        }
    }

    /// Day 0's local date (days since 1970-01-01). Noon of a day's date is on that date even when
    /// the offset in force that day differs from the snapshot's by a daylight-saving hour.
    /// Dates come from untrusted answers: one no calendar holds counts as absent.
    static func localToday(_ snapshot: WeatherSnapshot, now: Double) -> Int {
        let offset = snapshot.utcOffsetSeconds
        return snapshot.daily.lazy.compactMap { day in
            day.date.flatMap { ForecastTime.localDay($0 + 43200, offset: offset) }.map { $0 - day.daysAhead }
        }.first ?? ForecastTime.localDay(now, offset: offset) ?? 0
    }

    /// The air-quality day of the same date as the weather's `day` (day 0 is `today`): by date,
    /// as the two answers may count from different todays; by `daysAhead` for one without dates.
    static func airQuality(on day: DailyForecast, today: Int, in air: [DailyAirQuality]) -> DailyAirQuality? {
        air.first { ($0.localDay ?? today + $0.daysAhead) == today + day.daysAhead }
    }
}
