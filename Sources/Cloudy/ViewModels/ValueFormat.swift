/// How the pages write one value: in the place's units, its local time and the configured time
/// notation, the way the app's settings screen decided. Every function takes what it needs and
/// reads no settings of its own; an absent value is written `ValueFormat.missing`.
public enum ValueFormat {
    /// What the pages show where the provider sent no value.
    public static let missing = "–"

    /// One decimal, as the app showed values: "24.5", "-3.3" (halves away from zero), never "-0.0".
    static func number(_ value: Double) -> String {
        guard abs(value) < 1e15 else { return missing }  // NaN, infinities and nonsense never trap
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// A whole number: "1013", "-2".
    static func whole(_ value: Double) -> String {
        guard abs(value) < 1e15 else { return missing }
        let rounded = Int(value.rounded())
        return String(rounded == 0 ? 0 : rounded)
    }

    /// "24.5 °C", or "24.5 °C / 76.1 °F" with both units configured.
    static func temperature(_ celsius: Double?, _ units: [TemperatureUnit]) -> String {
        guard let celsius else { return missing }
        return units.map { number($0.fromCelsius(celsius)) + " " + $0.symbol }.joined(separator: " / ")
    }

    /// "3.2 m/s", or "3.2 m/s / 11.5 km/h" with two units configured.
    static func windSpeed(_ metersPerSecond: Double?, _ units: [WindSpeedUnit]) -> String {
        guard let metersPerSecond else { return missing }
        return units.map { number($0.fromMetersPerSecond(metersPerSecond)) + " " + $0.symbol }.joined(
            separator: " / ")
    }

    /// A ratio 0…1 as a whole percentage: "65 %".
    static func percent(_ ratio: Double?) -> String {
        ratio.map { whole($0 * 100) + " %" } ?? missing
    }

    /// Precipitation, given in meters, in millimeters: "0.3 mm".
    static func precipitation(_ meters: Double?) -> String {
        meters.map { number($0 * 1000) + " mm" } ?? missing
    }

    /// Pressure, given in pascals, in hectopascals: "1013 hPa".
    static func pressure(_ pascals: Double?) -> String {
        pascals.map { whole($0 / 100) + " hPa" } ?? missing
    }

    /// Visibility, given in meters, in kilometers: "24.1 km"; below one kilometer (fog) in whole
    /// meters, where tenths of a kilometer would hide what matters: "49 m", not "0.0 km".
    static func visibility(_ meters: Double?) -> String {
        meters.map { abs($0) < 999.5 ? whole($0) + " m" : number($0 / 1000) + " km" } ?? missing
    }

    static func uvIndex(_ index: Double?) -> String {
        index.map(number) ?? missing
    }

    /// The 16 points of the compass, clockwise from north.
    static let compassPoints = [
        "N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW",
    ]

    /// The compass point the wind comes from: each point covers 22.5°, from 11.25° before it
    /// (inclusive) to 11.25° after it, so 11.25° is already NNE and 348.75° is N.
    static func compassPoint(_ degrees: Double?) -> String {
        guard let degrees, degrees.isFinite else { return missing }
        let normalized = degrees.truncatingRemainder(dividingBy: 360) + (degrees < 0 ? 360 : 0)
        let sector = Int(((normalized + 11.25) / 22.5).rounded(.down)) % 16
        return compassPoints[sector]
    }

    /// The compass point the wind comes from, or nil when there is none to show: no direction
    /// or speed sent, or calm (a speed of 0, whose direction the APIs send as 0 or 360: "N").
    static func windDirection(_ degrees: Double?, speed metersPerSecond: Double?) -> String? {
        guard let degrees, let metersPerSecond, metersPerSecond != 0 else { return nil }
        return compassPoint(degrees)
    }

    /// "14:05" or "2:05 PM" at `seconds` (unix) in a place `utcOffset` seconds east of UTC.
    static func clock(_ seconds: Double?, utcOffset: Int, _ notation: TimeNotation) -> String {
        clock(seconds, offsets: { _ in utcOffset }, notation)
    }

    /// "14:05" or "2:05 PM" at `seconds` (unix) in a place whose offset from UTC at a moment is
    /// `offsets` (`WeatherSnapshot.utcOffsets`: daylight-saving changes included).
    static func clock(_ seconds: Double?, offsets: (Double) -> Int, _ notation: TimeNotation) -> String {
        guard let seconds, seconds.isFinite else { return missing }
        return clock(seconds + Double(offsets(seconds)), notation: notation)
    }

    /// "14:05" or "2:05 PM" for seconds since the epoch already shifted to local time. The day's
    /// second is taken in floating point: a time an answer made absurd (1e300) is no trap.
    static func clock(_ localSeconds: Double, notation: TimeNotation) -> String {
        guard localSeconds.isFinite else { return missing }
        let secondOfDay = (localSeconds.rounded(.down).truncatingRemainder(dividingBy: 86400) + 86400)
            .truncatingRemainder(dividingBy: 86400)
        let minuteOfDay = Int(secondOfDay / 60)
        let hour = minuteOfDay / 60
        let minute = String(minuteOfDay % 60).leftPadded(to: 2)
        switch notation {
        case .h24:
            return "\(String(hour).leftPadded(to: 2)):\(minute)"
        case .h12:
            let twelve = hour % 12 == 0 ? 12 : hour % 12
            return "\(twelve):\(minute) \(hour < 12 ? "AM" : "PM")"
        }
    }

    static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// "Today", "Tomorrow", or the weekday, for the local day `day` (`ForecastTime.localDay`) seen on the
    /// local day `today`: names are those of the place's own calendar, never the server's.
    static func dayName(_ day: Int, today: Int) -> String {
        switch day - today {
        case 0: return "Today"
        case 1: return "Tomorrow"
        default: return weekdays[((day + 4) % 7 + 7) % 7]  // 1970-01-01 was a Thursday
        }
    }

    /// How long ago, roughly: "45 s", "12 min", "2 h 5 min", "3 d 4 h".
    static func age(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.down)))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min" }
        if total < 86400 {
            let minutes = total % 3600 / 60
            return "\(total / 3600) h" + (minutes > 0 ? " \(minutes) min" : "")
        }
        let hours = total % 86400 / 3600
        return "\(total / 86400) d" + (hours > 0 ? " \(hours) h" : "")
    }
}
