import Foundation

/// A place the operator asked Cloudy to watch: one entry of `locations:` in `cloudy.yml`.
public struct Place: Sendable, Equatable {
    /// The `location` label; unique within a config.
    public var name: String
    /// Decimal degrees. For a place given by `city:` these are 0 until the geocoder has found it
    /// (`isLocated`); the refresher then fetches with the found coordinates.
    public var latitude: Double
    public var longitude: Double
    /// IANA zone from the config; when nil the provider's (or geocoder's) zone is used.
    public var timezone: String?
    /// The units this place is shown in (the global `units:` merged with the place's override).
    public var units: UnitSettings
    /// `city:` (and `country:`) from the config: the place is found by name through the geocoder.
    public var city: CitySearch?
    /// False only for a `city:` place whose coordinates are not known yet.
    public var isLocated: Bool
    /// The place's alert thresholds: the config's `alerts:` merged with the place's own.
    public var alerts: AlertThresholds
    /// `warnings:` of the place: the warning sources it asks whatever its area (`[]`: none);
    /// nil to let its coordinates decide (`WarningSettings.sources(for:)`).
    public var warningSources: [WarningSourceName]?

    public init(
        name: String, latitude: Double, longitude: Double, timezone: String? = nil, units: UnitSettings = .init(),
        alerts: AlertThresholds = .builtIn
    ) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.timezone = timezone
        self.units = units
        self.alerts = alerts
        self.city = nil
        self.isLocated = true
    }

    public init(
        name: String, city: CitySearch, timezone: String? = nil, units: UnitSettings = .init(),
        alerts: AlertThresholds = .builtIn
    ) {
        self.init(name: name, latitude: 0, longitude: 0, timezone: timezone, units: units, alerts: alerts)
        self.city = city
        self.isLocated = false
    }

    /// Whether an upstream is asked the same for `other` as for this place: the same name,
    /// coordinates, `city:` and time zone. Units, thresholds and warning choices change only
    /// what is shown (which places a warning source asks is its feed's schedule), so a reload
    /// that changes only them asks nothing again, and an answer asked before it still counts.
    public func isAskedAlike(_ other: Place) -> Bool {
        name == other.name && latitude == other.latitude && longitude == other.longitude && city == other.city
            && timezone == other.timezone
    }

    /// Whether `name` is an IANA zone this machine knows, written as one (`Europe/Brussels`,
    /// `Etc/GMT+5`): letters, digits, `/ _ - +`, at most 64 characters, no path tricks. The rule
    /// for a config's `timezone:` and for the zone a geocoder answers with, which goes into
    /// every request for the place.
    public static func isTimeZoneName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= 64, !name.hasPrefix("/"), !name.contains("..") else { return false }
        let written = name.unicodeScalars.allSatisfy { scalar in
            (scalar >= "A" && scalar <= "Z") || (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9")
                || scalar == "/" || scalar == "_" || scalar == "-" || scalar == "+"
        }
        return written && ZoneRules.named(name) != nil
    }

    /// `name` when it passes `isTimeZoneName`, else nil: for zones an upstream names.
    static func knownTimeZone(_ name: String?) -> String? {
        name.flatMap { isTimeZoneName($0) ? $0 : nil }
    }
}

/// What to ask the geocoder: `"Springfield, Illinois"` (text after a comma narrows the match to
/// a country or region) and an optional ISO country code.
public struct CitySearch: Sendable, Equatable, Codable {
    public var query: String
    public var country: String?

    public init(query: String, country: String? = nil) {
        self.query = query
        self.country = country
    }

    public var description: String { query + (country.map { " (\($0))" } ?? "") }
}
