/// The threshold series of a place (`weather_alert_threshold_*{location,alert}`), one per alert
/// that is not `off` and that the provider gives a daily value for, in base units: the shipped
/// alert rules join each place's forecast with them. They come from the config, not the
/// weather, so they stay on the page while a place is down or stale, and change with a reload.
enum AlertThresholdFamilies {
    static let celsius = MetricDescriptor(
        "weather_alert_threshold_celsius", .gauge,
        "Alert threshold of this place in degrees Celsius: frost below it, heat at or above it.")
    static let metersPerSecond = MetricDescriptor(
        "weather_alert_threshold_meters_per_second", .gauge,
        "Alert threshold of this place in meters per second: daily maximum wind or gust at or above it.")
    static let meters = MetricDescriptor(
        "weather_alert_threshold_meters", .gauge,
        "Alert threshold of this place in meters: a daily precipitation sum at or above it.")
    static let index = MetricDescriptor(
        "weather_alert_threshold", .gauge,
        "Alert threshold of this place for an index without unit: UV index or European air quality index.")

    static func descriptor(_ quantity: WeatherAlert.Quantity) -> MetricDescriptor {
        switch quantity {
        case .temperature: return celsius
        case .windSpeed: return metersPerSecond
        case .length: return meters
        case .index: return index
        }
    }

    static func addSamples(of place: Place, lacking: Set<WeatherAlert>, to page: inout MetricFamilies) {
        for alert in WeatherAlert.allCases where !lacking.contains(alert) {
            page.add(
                descriptor(alert.quantity), labels: [("location", place.name), ("alert", alert.rawValue)],
                value: place.alerts[alert])
        }
    }
}
