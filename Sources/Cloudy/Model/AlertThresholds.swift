/// One weather alert a place can be watched for (`alerts:` in `cloudy.yml`); the raw value is the
/// config key and the `alert` label of the threshold series.
public enum WeatherAlert: String, Sendable, CaseIterable {
    case frost
    case heat
    case wind
    case gust
    case precipitation
    case uv
    case airQuality = "air_quality"

    /// What a threshold of this alert measures, which decides the units it may be written in and
    /// the series it is exported as.
    public enum Quantity: Sendable {
        case temperature
        case windSpeed
        case length
        case index
    }

    public var quantity: Quantity {
        switch self {
        case .frost, .heat: return .temperature
        case .wind, .gust: return .windSpeed
        case .precipitation: return .length
        case .uv, .airQuality: return .index
        }
    }
}

/// A place's alert thresholds in the model's base units (°C, m/s, m, a plain index); an alert
/// without a threshold is `off` for that place. Frost is crossed by a daily minimum *below* its
/// threshold, every other alert by a value that *reaches* it: the shipped rules compare the same way.
public struct AlertThresholds: Sendable, Equatable {
    private var values: [WeatherAlert: Double]

    public init(_ values: [WeatherAlert: Double]) {
        self.values = values
    }

    /// What every place gets unless the config says otherwise: the constants the shipped rules
    /// had before thresholds were per place (frost 0 °C, heat 30 °C, gale 17.2 m/s = Beaufort 8,
    /// storm gusts 24.5 m/s = Beaufort 10, 20 mm a day, UV 8 "very high", European AQI 100).
    public static let builtIn = AlertThresholds([
        .frost: 0, .heat: 30, .wind: 17.2, .gust: 24.5, .precipitation: 0.02, .uv: 8, .airQuality: 100,
    ])

    /// The threshold in base units, or nil when the alert is off.
    public subscript(alert: WeatherAlert) -> Double? {
        get { values[alert] }
        set { values[alert] = newValue }
    }

    /// The alerts whose threshold differs from `defaults` (a different value, or off on one side
    /// only), in `WeatherAlert` order.
    public func differences(from defaults: AlertThresholds) -> [WeatherAlert] {
        WeatherAlert.allCases.filter { self[$0] != defaults[$0] }
    }

    /// The alerts a forecast day crosses, in `WeatherAlert` order. Air quality is not part of the
    /// daily weather forecast, so it is never among them.
    public func crossed(by day: DailyForecast) -> [WeatherAlert] {
        WeatherAlert.allCases.filter { alert in
            guard let threshold = self[alert], let value = Self.value(of: alert, in: day) else { return false }
            return Self.crosses(value, threshold, alert)
        }
    }

    /// Whether `value` crosses `threshold`, both in base units, exactly as the shipped rules
    /// compare: in the unit the rule reads (mm for precipitation, else the base unit), against
    /// the threshold less 1e-9, so a value equal to its threshold in the place's unit counts as
    /// equal although the threshold is kept to 9 decimals ("60 km/h" is 16.666666667 m/s, a
    /// forecast of 60 km/h 16.666666666666668).
    static func crosses(_ value: Double, _ threshold: Double, _ alert: WeatherAlert) -> Bool {
        let scale = alert == .precipitation ? 1000.0 : 1
        let limit = threshold * scale - 1e-9
        return alert == .frost ? value * scale < limit : value * scale >= limit
    }

    /// The day's value an alert compares with its threshold, in base units.
    public static func value(of alert: WeatherAlert, in day: DailyForecast) -> Double? {
        switch alert {
        case .frost: return day.temperatureMinCelsius
        case .heat: return day.temperatureMaxCelsius
        case .wind: return day.windSpeedMaxMetersPerSecond
        case .gust: return day.windGustMaxMetersPerSecond
        case .precipitation: return day.precipitationSumMeters
        case .uv: return day.uvIndexMax
        case .airQuality: return nil
        }
    }
}
