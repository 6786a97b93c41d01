import Foundation

extension Config {
    /// The hours a zone may lie from its longitude's solar time before a place's `timezone:` is
    /// taken for a mistake. Zones where people live stay within about 3 hours of it (western
    /// China 2.2, western Alaska 3); Kiribati's UTC+14 at 157° W is half an hour from it, a day on.
    static let timeZoneDoubtHours = 5.0

    /// What the config likely says by mistake, though it is valid: names that differ only in case
    /// (`nameDoubts`), each located place whose `timezone:` is more than `timeZoneDoubtHours` from
    /// the time at its longitude ("New York" at Asia/Tokyo: its days, and Dark Sky's `day="0"`,
    /// would be Tokyo's), an empty `air_quality:` and thresholds that cannot fire
    /// (`thresholdDoubts`). `--config.check` prints these as warnings, and the exporter logs them
    /// at start and on a reload, each on one line. Empty when none.
    public func doubts(at now: Double) -> [String] {
        (nameDoubts + timeZoneDoubts(at: now) + thresholdDoubts).map(ConfigError.oneLine)  // a name may hold "\n"
    }

    /// Places whose names differ only in case ("Berlin" and "berlin"): two series and two pages
    /// that a dashboard shows alike, most likely one place written twice.
    var nameDoubts: [String] {
        Dictionary(grouping: places.map(\.name), by: { $0.lowercased() }).values
            .filter { $0.count > 1 }
            .map { names in
                "locations " + names.map { "\"\($0)\"" }.joined(separator: ", ")
                    + " differ only in case: their series read alike on a dashboard; rename one, or remove it if "
                    + "they are the same place"
            }
            .sorted()
    }

    /// An `air_quality:` written with no value (off, though it reads as on), and thresholds the
    /// config sets (other than the built-in defaults) that cannot fire: the provider gives no
    /// daily value for them (docs/providers.md, "what it lacks"), `forecast.days` asks for no
    /// days, or `air_quality` is set with no `air_quality:` section or with a source that gives
    /// no European index (OpenWeatherMap's).
    var thresholdDoubts: [String] {
        var doubts = [String]()
        if airQualityWrittenEmpty {
            doubts.append(
                "air_quality: has no value, which counts as absent: air quality is off; write air_quality: {} "
                    + "to turn it on with the defaults, or remove the key")
        }
        if let whose = whoSetUnusedAirQualityThreshold {
            doubts.append(
                "alerts.air_quality\(whose): there is no air_quality: section, so there is no index to compare and "
                    + "it cannot fire; add air_quality: {} or set it off to say so")
        }
        if airQuality?.source == .openWeatherMap, let whose = whoSets(.airQuality) {
            doubts.append(
                "alerts.air_quality\(whose): air_quality.source openweathermap gives no European index, so it "
                    + "cannot fire (docs/providers.md); set it off to say so")
        }
        let set = WeatherAlert.allCases.filter { $0 != .airQuality && whoSets($0) != nil }
        guard !set.isEmpty else { return doubts }
        if forecast.days == 0 {
            return ["alerts: forecast.days is 0, so there is no daily forecast and no weather alert can fire"] + doubts
        }
        return set.filter { Self.lacks(provider, $0) }.map { alert in
            "alerts.\(alert.rawValue)\(whoSets(alert) ?? ""): \(provider.name.rawValue) gives no daily value for "
                + "it, so it cannot fire (docs/providers.md); set it off to say so"
        } + doubts
    }

    /// Who sets `alert` to other than its built-in default: nil when no place has such a
    /// threshold, "" when the top-level `alerts` sets it, else " of " and the places that do.
    func whoSets(_ alert: WeatherAlert) -> String? {
        func isSet(_ value: Double?) -> Bool { value != nil && value != AlertThresholds.builtIn[alert] }
        let setting = places.filter { isSet($0.alerts[alert]) }.map(\.name)
        guard !setting.isEmpty else { return nil }
        guard !isSet(alerts[alert]) else { return "" }
        return " of " + setting.prefix(3).joined(separator: ", ") + (setting.count > 3 ? ", …" : "")
    }

    /// Whether nothing this config asks for gives a daily value `alert` could compare: the
    /// provider's (`lacks`), or for `air_quality` a European index, which OpenWeatherMap's air
    /// pollution has none of. Such an alert has no threshold series.
    func cannotFeed(_ alert: WeatherAlert) -> Bool {
        Self.lacks(provider, alert) || (alert == .airQuality && airQuality?.source == .openWeatherMap)
    }

    /// Whether `provider` gives no daily value for `alert`.
    static func lacks(_ provider: ProviderSettings, _ alert: WeatherAlert) -> Bool {
        switch provider.name {
        case .openMeteo: return false
        case .openWeatherMap: return alert == .uv && !provider.oneCall
        case .metNorway: return alert == .gust || alert == .uv
        case .darkSky: return alert == .wind || alert == .gust
        }
    }

    private func timeZoneDoubts(at now: Double) -> [String] {
        places.compactMap { place in
            guard place.isLocated, let zone = place.timezone, let rules = ZoneRules.named(zone) else {
                return nil
            }
            let hours = Double(rules.utcOffset(at: now)) / 3600
            let solar = place.longitude / 15
            let apart = abs(remainder(hours - solar, 24))
            guard apart > Self.timeZoneDoubtHours else { return nil }
            return "location \"\(place.name)\": timezone \(zone) (UTC\(Self.signed(hours)) now) is "
                + "\(String(format: "%.1f", apart)) hours from the time at its longitude \(place.longitude) "
                + "(about UTC\(Self.signed(solar.rounded()))): its forecast days would be \(zone)'s"
        }
    }

    /// "+9", "−4.5", "+0".
    private static func signed(_ hours: Double) -> String {
        let text = hours == hours.rounded() ? String(Int(abs(hours))) : String(format: "%g", abs(hours))
        return (hours < 0 ? "−" : "+") + text
    }
}
