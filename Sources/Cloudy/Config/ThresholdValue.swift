import Foundation

/// A threshold as a person writes it in `alerts:` — a number and its unit (`"3 °C"`, `"37.4 °F"`,
/// `"60 km/h"`, `"0.8 in"`), a plain number for an index (`uv`, `air_quality`), or `off` — read
/// into the model's base unit. Conversions use the exact definitions (1 mph = 0.44704 m/s,
/// 1 kn = 1852/3600 m/s, 1 in = 0.0254 m), so the exported series equal the written value to
/// a billionth of the base unit.
enum ThresholdValue {
    /// The units each quantity may be written in, with the function to its base unit. `C` and `F`
    /// without the degree sign are accepted because the sign is awkward to type on many keyboards;
    /// nothing else (no `degC`, no `K`), so a typo is an error rather than a guess.
    static let units: [WeatherAlert.Quantity: [(symbol: String, toBase: @Sendable (Double) -> Double)]] = [
        .temperature: [
            ("°C", { $0 }), ("C", { $0 }), ("°F", { ($0 - 32) * 5 / 9 }), ("F", { ($0 - 32) * 5 / 9 }),
        ],
        .windSpeed: [
            ("m/s", { $0 }), ("km/h", { $0 / 3.6 }), ("mph", { $0 * 0.44704 }), ("kn", { $0 * 1852 / 3600 }),
        ],
        .length: [("mm", { $0 / 1000 }), ("in", { $0 * 0.0254 })],
    ]

    /// How an error shows the units a quantity takes.
    static func example(_ quantity: WeatherAlert.Quantity) -> String {
        switch quantity {
        case .temperature: return "a temperature such as \"3 °C\" or \"37.4 °F\""
        case .windSpeed: return "a wind speed such as \"17 m/s\", \"60 km/h\", \"40 mph\" or \"30 kn\""
        case .length: return "a daily amount such as \"20 mm\" or \"0.8 in\""
        case .index: return "a plain number such as 8"
        }
    }

    /// The threshold in base units (nil for `off`), or why `text` is not one for `alert`.
    static func parse(_ text: String, for alert: WeatherAlert) -> Result<Double?, Problem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "off" { return .success(nil) }
        let numberEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == "." || $0 == "-" || $0 == "+")) }
        let numberText = trimmed[..<(numberEnd ?? trimmed.endIndex)]
        let unit = trimmed[(numberEnd ?? trimmed.endIndex)...].trimmingCharacters(in: .whitespaces)
        guard let number = Double(numberText), number.isFinite else {
            return .failure(.notAThreshold(example(alert.quantity)))
        }
        // "1e1 °C", "3,5 °C", "0x10", "3 5 °C": a number written another way, not a unit (no
        // unit begins so).
        if let next = unit.first, next.isNumber || "eExX_,".contains(next) {
            return .failure(.notAThreshold(example(alert.quantity)))
        }
        let value: Double
        if alert.quantity == .index {
            guard unit.isEmpty else { return .failure(.notAThreshold(example(.index))) }
            value = number
        } else {
            guard !unit.isEmpty else { return .failure(.noUnit(example(alert.quantity))) }
            guard let known = units[alert.quantity]?.first(where: { $0.symbol == unit }) else {
                return .failure(.wrongUnit(unit, example(alert.quantity)))
            }
            value = known.toBase(number)
        }
        if alert.quantity != .temperature, value < 0 { return .failure(.negative) }
        if alert.quantity == .temperature, value < -273.15 { return .failure(.belowAbsoluteZero) }
        // To the nearest billionth of the base unit: 37.4 °F is the 3 °C it means, not the
        // 3.0000000000000004 that binary arithmetic leaves, on the page and in alert texts
        // (+ 0 makes "-0 m/s" the 0 it is).
        let exact = (value * 1e9).rounded() / 1e9 + 0
        // A number of 300 digits reads as finite, and its billionths do not: no threshold is
        // infinite (a frost threshold of +Inf would fire every day).
        guard exact.isFinite else { return .failure(.notAThreshold(example(alert.quantity))) }
        return .success(exact)
    }

    enum Problem: Error, Equatable {
        case notAThreshold(String)
        case noUnit(String)
        case wrongUnit(String, String)
        case negative
        case belowAbsoluteZero

        func reason(_ text: String) -> String {
            switch self {
            case .notAThreshold(let example): return "\"\(text)\" is not a threshold: write \(example), or off"
            case .noUnit(let example): return "\"\(text)\" has no unit: write \(example), or off"
            case .wrongUnit(let unit, let example):
                return "\"\(unit)\" is not a unit of this threshold: write \(example), or off"
            case .negative: return "must not be negative, found \"\(text)\""
            case .belowAbsoluteZero: return "\"\(text)\" is below absolute zero (-273.15 °C)"
            }
        }
    }
}

extension ConfigLoader {
    /// `alerts:` at the top level (over the built-in defaults) or in a place (over the top level's).
    static func alertThresholds(_ map: YAMLMapping, base: AlertThresholds) throws(ConfigError) -> AlertThresholds {
        try map.rejectUnknownKeys(WeatherAlert.allCases.map(\.rawValue))
        var thresholds = base
        for alert in WeatherAlert.allCases {
            guard let text = try map.text(alert.rawValue, expecting: ThresholdValue.example(alert.quantity) + " or off")
            else { continue }
            switch ThresholdValue.parse(text, for: alert) {
            case .success(let value): thresholds[alert] = value
            case .failure(let problem): throw map.error(alert.rawValue, problem.reason(text))
            }
        }
        return thresholds
    }
}

extension Config {
    /// What `--config.check` says about thresholds: the top-level `alerts:` where it departs from
    /// the built-in defaults, then each place whose thresholds depart from the top level's, in
    /// base units ("Greenhouse: frost 3 °C, heat off"). Empty when every place has the defaults.
    public var alertSummary: [String] {
        func describe(_ thresholds: AlertThresholds, _ alerts: [WeatherAlert]) -> String {
            alerts.map { alert in
                "\(alert.rawValue) " + (thresholds[alert].map { ThresholdValue.format($0, alert.quantity) } ?? "off")
            }.joined(separator: ", ")
        }
        var lines: [String] = []
        var builtIn = AlertThresholds.builtIn
        if airQuality == nil { builtIn[.airQuality] = nil }  // off with air quality itself
        let global = alerts.differences(from: builtIn)
        if !global.isEmpty { lines.append("alerts (every place): " + describe(alerts, global)) }
        for place in places {
            let own = place.alerts.differences(from: alerts)
            if !own.isEmpty { lines.append("alerts of \(place.name): " + describe(place.alerts, own)) }
        }
        return lines.map(ConfigError.oneLine)  // a place's name may hold "\n"
    }
}

extension ThresholdValue {
    /// A base-unit threshold as `--config.check` prints it: "3 °C", "17.2 m/s", "20 mm", "8".
    static func format(_ value: Double, _ quantity: WeatherAlert.Quantity) -> String {
        switch quantity {
        case .temperature: return String(format: "%g °C", value)
        case .windSpeed: return String(format: "%g m/s", value)
        case .length: return String(format: "%g mm", value * 1000)
        case .index: return String(format: "%g", value)
        }
    }
}
