/// One alert threshold a forecast day crosses, as the place's pages mark it: what is crossed and
/// by how much, the day's value and the threshold both in the place's units ("Frost", "low
/// 2.0 °C, below 3.0 °C"; "just below" where both read the same in a unit). The comparison is the model's
/// (`AlertThresholds.crossed(by:)`), the same the shipped alert rules make, so the pages mark the
/// days the alerts fire for.
public struct ThresholdCrossing: Sendable, Equatable {
    /// The alert's config key, also the mark's CSS class: "frost", "gust".
    public let alert: String
    /// "Frost", "Heat", "Gale", "Storm gusts", "Heavy precipitation", "High UV".
    public let title: String
    /// "low 2.0 °C, below 3.0 °C", "gusts 26.0 m/s, at or above 24.5 m/s".
    public let detail: String

    /// The crossings of `day` against `thresholds`, in `WeatherAlert` order.
    public static func of(_ day: DailyForecast, thresholds: AlertThresholds, units: UnitSettings)
        -> [ThresholdCrossing]
    {
        thresholds.crossed(by: day).compactMap { alert in
            guard let threshold = thresholds[alert], let value = AlertThresholds.value(of: alert, in: day) else {
                return nil
            }
            let shownValue = format(value, alert.quantity, units)
            let shownThreshold = format(threshold, alert.quantity, units)
            // A low of -0.02 °C is below 0 °C but reads "0.0 °C", as the threshold does: say so,
            // also when another unit configured reads apart ("0.0 °C / 31.9 °F").
            let readsAlike = zip(shownValue.split(separator: " / "), shownThreshold.split(separator: " / ")).contains {
                $0 == $1
            }
            let comparison = alert != .frost ? "at or above" : readsAlike ? "just below" : "below"
            return ThresholdCrossing(
                alert: alert.rawValue, title: title(alert),
                detail: "\(measure(alert)) \(shownValue), \(comparison) \(shownThreshold)")
        }
    }

    /// What the pages call an alert, as a mark's title.
    static func title(_ alert: WeatherAlert) -> String {
        switch alert {
        case .frost: return "Frost"
        case .heat: return "Heat"
        case .wind: return "Gale"
        case .gust: return "Storm gusts"
        case .precipitation: return "Heavy precipitation"
        case .uv: return "High UV"
        case .airQuality: return "Poor air quality"
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

    private static func format(_ value: Double, _ quantity: WeatherAlert.Quantity, _ units: UnitSettings) -> String {
        switch quantity {
        case .temperature: return ValueFormat.temperature(value, units.temperature)
        case .windSpeed: return ValueFormat.windSpeed(value, units.windSpeed)
        case .length: return ValueFormat.precipitation(value)
        case .index: return ValueFormat.uvIndex(value)
        }
    }
}
