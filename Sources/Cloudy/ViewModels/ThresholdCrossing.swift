/// One alert threshold a forecast day crosses, as the place's pages mark it: what is crossed and
/// by how much, the day's value and the threshold both in the place's units ("Frost", "low
/// 2.0 °C, below 3.0 °C"; "just below" where both read the same in a unit). The comparison is the model's
/// (`AlertThresholds.crossed(by:)`), the same the shipped alert rules make, so the pages mark the
/// days the alerts fire for.
public struct ThresholdCrossing: Sendable, Equatable {
    /// The alert's config key, also the mark's CSS class: "frost", "gust".
    public let alert: String
    /// "Frost", "Heat", "Gale", "Storm gusts", "Heavy precipitation", "High UV", "Air pollution".
    public let title: String
    /// "low 2.0 °C, below 3.0 °C", "gusts 26.0 m/s, at or above 24.5 m/s", "air quality index 123
    /// (extremely poor), at or above 100".
    public let detail: String

    /// The crossings of `day` against `thresholds`, in `WeatherAlert` order; `air`, the same
    /// day's air-quality maxima, for the air-quality threshold.
    public static func of(
        _ day: DailyForecast, air: DailyAirQuality? = nil, thresholds: AlertThresholds, units: UnitSettings
    ) -> [ThresholdCrossing] {
        alerts(crossedBy: day, air: air, thresholds: thresholds).compactMap { alert in
            guard let threshold = thresholds[alert],
                let value = alert == .airQuality ? air?.indicesMax.european : AlertThresholds.value(of: alert, in: day)
            else { return nil }
            let shownValue = format(value, alert, units)
            let shownThreshold = format(threshold, alert, units)
            // The index's band, as the card names the current reading and the alert rule its peak.
            let band = alert == .airQuality ? AirQualityViewModel.european(value).map { " (\($0.band))" } ?? "" : ""
            // A low of -0.02 °C is below 0 °C but reads "0.0 °C", as the threshold does: say so,
            // also when another unit configured reads apart ("0.0 °C / 31.9 °F").
            let readsAlike = zip(shownValue.split(separator: " / "), shownThreshold.split(separator: " / ")).contains {
                $0 == $1
            }
            let comparison = alert != .frost ? "at or above" : readsAlike ? "just below" : "below"
            return ThresholdCrossing(
                alert: alert.rawValue, title: title(alert),
                detail: "\(measure(alert)) \(shownValue)\(band), \(comparison) \(shownThreshold)")
        }
    }

    /// The alerts `day` crosses: the weather's (`AlertThresholds.crossed(by:)`), then air quality,
    /// whose threshold `CloudyAirQualityForecast` compares with the day's highest European index.
    static func alerts(crossedBy day: DailyForecast, air: DailyAirQuality?, thresholds: AlertThresholds)
        -> [WeatherAlert]
    {
        let crossed = thresholds.crossed(by: day)
        guard let threshold = thresholds[.airQuality], let index = air?.indicesMax.european,
            AlertThresholds.crosses(index, threshold, .airQuality)
        else { return crossed }
        return crossed + [.airQuality]
    }

    /// What the pages call an alert, as a mark's title. Air quality's names no band ("Poor" is
    /// one of the European index's, and the threshold may be in any): the detail does.
    static func title(_ alert: WeatherAlert) -> String {
        switch alert {
        case .frost: return "Frost"
        case .heat: return "Heat"
        case .wind: return "Gale"
        case .gust: return "Storm gusts"
        case .precipitation: return "Heavy precipitation"
        case .uv: return "High UV"
        case .airQuality: return "Air pollution"
        }
    }

    /// The day's value the alert reads, as the detail names it.
    private static func measure(_ alert: WeatherAlert) -> String {
        switch alert {
        case .frost: return "low"
        case .heat: return "high"
        case .wind: return "wind"
        case .gust: return "gusts"
        case .precipitation: return "precipitation"
        case .uv: return "UV index"
        case .airQuality: return "air quality index"
        }
    }

    private static func format(_ value: Double, _ alert: WeatherAlert, _ units: UnitSettings) -> String {
        // The air-quality index in whole numbers, as the card shows it.
        if alert == .airQuality { return ValueFormat.whole(value) }
        switch alert.quantity {
        case .temperature: return ValueFormat.temperature(value, units.temperature)
        case .windSpeed: return ValueFormat.windSpeed(value, units.windSpeed)
        case .length: return ValueFormat.precipitation(value)
        case .index: return ValueFormat.uvIndex(value)
        }
    }
}
