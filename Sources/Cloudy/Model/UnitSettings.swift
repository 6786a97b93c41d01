/// The settings screen of the app, as a value: which units a place's metrics are exposed in.
/// View models are *given* one of these; nothing reads settings from a global.
public struct UnitSettings: Sendable, Equatable {
    /// Non-empty, without duplicates, in the order the operator wrote them.
    public var temperature: [TemperatureUnit]
    public var windSpeed: [WindSpeedUnit]
    public var time: TimeNotation

    public init(
        temperature: [TemperatureUnit] = [.celsius], windSpeed: [WindSpeedUnit] = [.metersPerSecond],
        time: TimeNotation = .h24
    ) {
        self.temperature = temperature
        self.windSpeed = windSpeed
        self.time = time
    }
}

public enum TemperatureUnit: String, Sendable, CaseIterable {
    case celsius
    case fahrenheit

    /// Converts from the model's base unit (°C). °F = °C × 9/5 + 32, exactly.
    public func fromCelsius(_ celsius: Double) -> Double {
        switch self {
        case .celsius: return celsius
        case .fahrenheit: return celsius * 9 / 5 + 32
        }
    }

    public var symbol: String {
        switch self {
        case .celsius: return "°C"
        case .fahrenheit: return "°F"
        }
    }
}

public enum WindSpeedUnit: String, Sendable, CaseIterable {
    case metersPerSecond = "meters_per_second"
    case kilometersPerHour = "kilometers_per_hour"
    case milesPerHour = "miles_per_hour"
    case knots

    /// Kilometres per hour in one of this unit (exact definitions: 1 m/s = 3.6 km/h,
    /// 1 mph = 1.609344 km/h, 1 kn = 1.852 km/h).
    public var kilometersPerHour: Double {
        switch self {
        case .metersPerSecond: return 3.6
        case .kilometersPerHour: return 1
        case .milesPerHour: return 1.609344
        case .knots: return 1.852
        }
    }

    /// Converts from the model's base unit (m/s).
    public func fromMetersPerSecond(_ metersPerSecond: Double) -> Double {
        switch self {
        case .metersPerSecond: return metersPerSecond
        case .kilometersPerHour: return metersPerSecond * 3.6
        default: return metersPerSecond * 3.6 / kilometersPerHour
        }
    }

    /// Converts a value given in this unit to the model's base unit (m/s).
    public func toMetersPerSecond(_ value: Double) -> Double {
        switch self {
        case .metersPerSecond: return value
        default: return value * kilometersPerHour / 3.6
        }
    }

    public var symbol: String {
        switch self {
        case .metersPerSecond: return "m/s"
        case .kilometersPerHour: return "km/h"
        case .milesPerHour: return "mph"
        case .knots: return "kn"
        }
    }
}

/// How the status page writes clock times.
public enum TimeNotation: String, Sendable, CaseIterable {
    case h24 = "24h"
    case h12 = "12h"
}
