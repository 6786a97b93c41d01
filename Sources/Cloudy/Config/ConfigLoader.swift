import Foundation
import Yams

/// Reads `cloudy.yml` into a `Config`, strictly: unknown keys, wrong types, bad durations and
/// out-of-range values are errors that name the field and its line, never silence.
public enum ConfigLoader {
    static let topLevelKeys = [
        "provider", "geocoding", "refresh", "units", "forecast", "alerts", "locations", "shard", "air_quality",
        "warnings",
    ]

    public static func load(file path: String) throws(ConfigError) -> Config {
        try parse(yaml: try text(of: path, named: "the file"), file: path)
    }

    /// The most a config file may hold: 20,000 places are ~2 MB.
    static let maxFileBytes = 64 << 20

    /// The text of a config file (`cloudy.yml`, the web config), or why there is none, in the
    /// system's words ("cannot read the file: Permission denied", "…: Is a directory", "…: File
    /// too large" past `maxFileBytes`), or not UTF-8. A pipe works (`--config.file=/dev/stdin`).
    static func text(of path: String, named what: String) throws(ConfigError) -> String {
        func refused(_ reason: String) -> ConfigError { ConfigError(file: path, field: "", reason: reason) }
        let data: Data
        do { data = try StorageFile.read(URL(fileURLWithPath: path), atMost: maxFileBytes) } catch {
            throw refused("cannot read \(what): " + error.reason)
        }
        // A FIFO read before its writer came reads as empty: not an empty file (an empty web
        // config is plain HTTP without a login), so not taken for one.
        var status = stat()
        if data.isEmpty, stat(path, &status) != 0 || status.st_mode & S_IFMT != S_IFREG {
            throw refused("cannot read \(what): nothing came from it (a pipe or FIFO without a writer?)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw refused("\(what) is not UTF-8 text") }
        return text
    }

    public static func loadDefault() -> Config {
        // The embedded config is tested; failing here is a programming error.
        do { return try parse(yaml: DefaultConfig.yaml, file: DefaultConfig.fileName) } catch { fatalError("\(error)") }
    }

    public static func parse(yaml: String, file: String? = nil) throws(ConfigError) -> Config {
        let root: Node?
        do {
            root = try YAMLMapping.compose(yaml)
        } catch {
            throw YAMLMapping.syntaxError(error, file: file)
        }
        guard let root else { throw ConfigError(file: file, line: 1, field: "", reason: "the config is empty") }
        let document = try YAMLMapping(root, path: "", file: file)
        try document.rejectUnknownKeys(topLevelKeys)

        var config = Config(places: [])
        config.refresh.parallelRequests = RefreshSettings.defaultParallelRequests
        try readProvider(document, into: &config)
        if let geocoding = try document.mapping("geocoding") {
            try geocoding.rejectUnknownKeys(["url"])
            if let url = try geocoding.url("url") { config.geocodingURL = url }
        }
        if let refresh = try document.mapping("refresh") {
            try refresh.rejectUnknownKeys(["interval", "timeout", "stale_after", "over_quota", "parallel_requests"])
            if let interval = try refresh.duration("interval", atLeast: 1) { config.refresh.interval = interval }
            if let timeout = try refresh.duration("timeout", atLeast: 0.001) { config.refresh.timeout = timeout }
            if let stale = try refresh.duration("stale_after", atLeast: 1) {
                (config.refresh.staleAfter, config.refresh.staleAfterIsWritten) = (stale, true)
            }
            if let overQuota = try refresh.oneOf("over_quota", OverQuota.self) { config.refresh.overQuota = overQuota }
            if let parallel = try refresh.int("parallel_requests", in: 1...16) {
                config.refresh.parallelRequests = parallel
            }
        }
        if let units = try document.mapping("units") {
            config.units = try unitSettings(units, base: UnitSettings(), allowTime: true)
        }
        if let forecast = try document.mapping("forecast") {
            try forecast.rejectUnknownKeys(["days", "hours"])
            if let days = try forecast.int("days", in: 0...16) { config.forecast.days = days }
            if let hours = try forecast.int("hours", in: 0...383) { config.forecast.hours = hours }
        }
        if let alerts = try document.mapping("alerts") {
            config.alerts = try alertThresholds(alerts, base: config.alerts)
        }
        config.places = try places(document, units: config.units, alerts: config.alerts)
        config.airQuality = try airQualitySettings(document, provider: config.provider)
        if config.airQuality == nil {
            config.airQualityWrittenEmpty = document.isWrittenEmpty("air_quality")
            // Without air quality there is nothing to compare an air-quality threshold with.
            config.whoSetUnusedAirQualityThreshold = config.whoSets(.airQuality)
            config.alerts[.airQuality] = nil
            for index in config.places.indices { config.places[index].alerts[.airQuality] = nil }
        }
        try readWarnings(document, into: &config)
        if let text = try document.string("shard") {
            guard let shard = Shard(text) else {
                throw document.error("shard", "\"\(text)\" is not INDEX/COUNT with 0 <= INDEX < COUNT <= 10000")
            }
            config.shard = shard
        }
        return config
    }

    private static func places(_ document: YAMLMapping, units: UnitSettings, alerts: AlertThresholds)
        throws(ConfigError) -> [Place]
    {
        guard let list = try document.sequence("locations") else {
            throw document.error("locations", "is required: list at least one place")
        }
        guard !list.items.isEmpty else { throw list.error("is empty: list at least one place") }
        var places: [Place] = []
        var seen: [String: Int] = [:]
        for (index, node) in list.items.enumerated() {
            let entry = try YAMLMapping(node, path: "locations[\(index)]", file: document.file)
            try entry.rejectUnknownKeys([
                "name", "latitude", "longitude", "timezone", "units", "city", "country", "alerts", "warnings",
            ])
            guard let name = try entry.string("name") else { throw entry.error("name", "is required") }
            if let problem = PlaceName.problem(name) { throw entry.error("name", problem) }
            if let first = seen[name] {
                throw entry.error(
                    "name", "\"\(name)\" is already the name of locations[\(first)]; names must be unique")
            }
            seen[name] = index
            let city = try entry.string("city")
            let country = try entry.string("country")
            if let city {
                if entry.has("latitude") || entry.has("longitude") {
                    throw entry.error("city", "give either city or latitude and longitude, not both")
                }
                if city.trimmingCharacters(in: .whitespaces).count < 2 {
                    throw entry.error("city", "must name a place (two characters or more)")
                }
            } else if country != nil {
                throw entry.error("country", "narrows a city: lookup; give city: too")
            }
            if let country, !(country.count == 2 && country.allSatisfy({ $0.isASCII && $0.isLetter })) {
                throw entry.error("country", "\"\(country)\" is not a two-letter ISO country code such as US or BE")
            }
            let latitude = try entry.double("latitude", in: -90...90)
            let longitude = try entry.double("longitude", in: -180...180)
            if city == nil, latitude == nil {
                throw entry.error("latitude", "is required (decimal degrees, -90 to 90), or give city: instead")
            }
            if city == nil, longitude == nil {
                throw entry.error("longitude", "is required (decimal degrees, -180 to 180)")
            }
            let timezone = try entry.string("timezone")
            if let timezone, !Place.isTimeZoneName(timezone) {
                throw entry.error("timezone", "\"\(timezone)\" is not an IANA time zone name such as Europe/Brussels")
            }
            var placeUnits = units
            if let override = try entry.mapping("units") {
                placeUnits = try unitSettings(override, base: units, allowTime: false)
            }
            var placeAlerts = alerts
            if let override = try entry.mapping("alerts") {
                placeAlerts = try alertThresholds(override, base: alerts)
            }
            if let city {
                places.append(
                    Place(
                        name: name, city: CitySearch(query: city, country: country?.uppercased()), timezone: timezone,
                        units: placeUnits, alerts: placeAlerts))
            } else if let latitude, let longitude {
                places.append(
                    Place(
                        name: name, latitude: latitude, longitude: longitude, timezone: timezone, units: placeUnits,
                        alerts: placeAlerts))
            }
        }
        return places
    }

    private static func unitSettings(_ map: YAMLMapping, base: UnitSettings, allowTime: Bool) throws(ConfigError)
        -> UnitSettings
    {
        try map.rejectUnknownKeys(allowTime ? ["temperature", "wind_speed", "time"] : ["temperature", "wind_speed"])
        var settings = base
        if let temperature = try map.oneOrMore("temperature", TemperatureUnit.self) {
            settings.temperature = temperature
        }
        if let wind = try map.oneOrMore("wind_speed", WindSpeedUnit.self) { settings.windSpeed = wind }
        if allowTime, let time = try map.oneOf("time", TimeNotation.self) { settings.time = time }
        return settings
    }
}

/// Rules for a place's name, which becomes the `location` label and appears on HTML pages.
public enum PlaceName {
    public static let maxLength = 300

    /// Why `name` cannot be used, or nil when it can.
    public static func problem(_ name: String) -> String? {
        if name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "must not be empty" }
        if name.count > maxLength { return "is \(name.count) characters long; at most \(maxLength) are allowed" }
        // Escaping makes quotes, backslashes and newlines safe in labels and HTML; other
        // control characters have no readable form anywhere, so they are refused.
        if let bad = name.unicodeScalars.first(where: {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
        }) {
            return "contains the control character \(codePoint(bad.value)); names must be printable"
        }
        // Invisible: a name with one reads as one without it (or turned around, U+202E), so two
        // places could look alike. Joiners stay (U+200C in Persian words, U+200D in emoji).
        if let bad = name.unicodeScalars.first(where: \.isInvisibleInNames) {
            return "contains the invisible character \(codePoint(bad.value)), which no dashboard shows; "
                + "write the name without it"
        }
        // "Berlin " beside "Berlin" would be two series that read the same on a dashboard.
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed != name {
            return "\"\(name)\" starts or ends with white space\(unseen(name)), which the label and the page "
                + "would keep; write \"\(trimmed)\""
        }
        return nil
    }

    /// The white space at either end of `name` that does not read as such in the message (a
    /// no-break or an ideographic space), spelt " (U+00A0)", else "".
    private static func unseen(_ name: String) -> String {
        let space = CharacterSet.whitespacesAndNewlines
        let ends =
            name.unicodeScalars.prefix(while: space.contains)
            + name.unicodeScalars.reversed().prefix(while: space.contains)
        let codes = Set(ends.filter { !" \t\n".unicodeScalars.contains($0) }.map(\.value)).sorted().map(codePoint)
        return codes.isEmpty ? "" : " (" + codes.joined(separator: ", ") + ")"
    }

    /// "U+0007", "U+00A0".
    private static func codePoint(_ value: UInt32) -> String {
        "U+" + String(value, radix: 16, uppercase: true).leftPadded(to: 4)
    }
}

extension Unicode.Scalar {
    /// Bidirectional controls and marks, zero-width spaces and invisible operators, the soft
    /// hyphen, the Hangul fillers and the Mongolian vowel separator, the byte order mark and the
    /// line and paragraph separators: characters that show nothing of themselves in a label or
    /// on a page. (The tag characters stay: they spell the flags of England, Scotland, Wales.)
    var isInvisibleInNames: Bool {
        switch value {
        case 0x00AD, 0x061C, 0x115F, 0x1160, 0x180E, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E,
            0x2060...0x2064, 0x2066...0x2069, 0x3164, 0xFEFF, 0xFFA0:
            return true
        default: return false
        }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
