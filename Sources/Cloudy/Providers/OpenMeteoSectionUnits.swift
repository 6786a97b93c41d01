/// One section's declared units (`current_units`, `hourly_units` or `daily_units`), converting
/// that section's values to base units, so the exporter stays right whatever unit parameters a
/// server applied.
struct OpenMeteoSectionUnits {
    /// The section's `*_units` object: variable name → unit string.
    let declared: [String: String]

    func celsius(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch declared[key] {
        case "°F": return (value - 32) * 5 / 9
        default: return value
        }
    }

    func metersPerSecond(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch declared[key] {
        case "m/s": return value
        case "mp/h", "mph": return WindSpeedUnit.milesPerHour.toMetersPerSecond(value)
        case "kn", "kt", "knots": return WindSpeedUnit.knots.toMetersPerSecond(value)
        default: return WindSpeedUnit.kilometersPerHour.toMetersPerSecond(value)  // "km/h", the API's default
        }
    }

    func meters(precipitation key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch declared[key] {
        case "inch": return value * 0.0254
        case "cm": return value / 100
        default: return value / 1000  // "mm"
        }
    }

    func meters(length key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch declared[key] {
        case "ft": return value * 0.3048
        default: return value
        }
    }

    func pascals(_ key: String, _ value: Double?) -> Double? {
        guard let value else { return nil }
        switch declared[key] {
        case "Pa": return value
        case "kPa": return value * 1000
        default: return value * 100  // "hPa"
        }
    }

    func ratio(_ value: Double?) -> Double? {
        value.map { $0 / 100 }
    }
}
