/// One section's declared units (`current_units`, `hourly_units` or `daily_units`), converting
/// that section's values to base units, so the exporter stays right whatever unit parameters a
/// server applied. Decoded as typed fields: only the variables whose unit matters are read (the
/// API declares a unit for every variable; the others are skipped, never copied).
// Properties carry the API's own JSON field names, so decoding needs no key mapping.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct OpenMeteoSectionUnits {
    var temperature_2m: String? = nil
    var apparent_temperature: String? = nil
    var dew_point_2m: String? = nil
    var temperature_2m_max: String? = nil
    var temperature_2m_min: String? = nil
    var wind_speed_10m: String? = nil
    var wind_gusts_10m: String? = nil
    var wind_speed_10m_max: String? = nil
    var wind_gusts_10m_max: String? = nil
    var precipitation: String? = nil
    var precipitation_sum: String? = nil
    var pressure_msl: String? = nil
    var visibility: String? = nil

    /// A section without a `*_units` object: every value in the API's default unit.
    init() {}

    /// A value in its declared unit to the base unit; looked up once per series, applied per value.
    /// A unit Cloudy does not know (`unknown`) gives no value rather than a guess: 297.65 "K"
    /// read as the default °C would be a wrong number on the page.
    struct Conversion: Sendable {
        let toBase: (@Sendable (Double) -> Double)?

        func callAsFunction(_ value: Double?) -> Double? {
            guard let toBase else { return nil }
            return value.map(toBase)
        }

        static let identity = Conversion { $0 }
        static let unknown = Conversion(toBase: nil)
        /// Percent → 0…1 (humidity, cloud cover, probabilities: the API has no other unit).
        static let ratio = Conversion { $0 / 100 }
    }

    /// No unit declared is the API's default (the first case of each).
    static func celsius(_ declared: String?) -> Conversion {
        switch declared {
        case nil, "°C": return .identity
        case "°F": return Conversion { ($0 - 32) * 5 / 9 }
        default: return .unknown
        }
    }

    static func metersPerSecond(_ declared: String?) -> Conversion {
        switch declared {
        case nil, "km/h": return Conversion { WindSpeedUnit.kilometersPerHour.toMetersPerSecond($0) }
        case "m/s": return .identity
        case "mp/h", "mph": return Conversion { WindSpeedUnit.milesPerHour.toMetersPerSecond($0) }
        case "kn", "kt", "knots": return Conversion { WindSpeedUnit.knots.toMetersPerSecond($0) }
        default: return .unknown
        }
    }

    static func meters(precipitation declared: String?) -> Conversion {
        switch declared {
        case nil, "mm": return Conversion { $0 / 1000 }
        case "inch": return Conversion { $0 * 0.0254 }
        case "cm": return Conversion { $0 / 100 }
        default: return .unknown
        }
    }

    static func meters(length declared: String?) -> Conversion {
        switch declared {
        case nil, "m": return .identity
        case "ft": return Conversion { $0 * 0.3048 }
        default: return .unknown
        }
    }

    static func pascals(_ declared: String?) -> Conversion {
        switch declared {
        case nil, "hPa", "mbar": return Conversion { $0 * 100 }
        case "Pa": return .identity
        case "kPa": return Conversion { $0 * 1000 }
        default: return .unknown
        }
    }
}
