/// A place the operator asked Cloudy to watch: one entry of `locations:` in `cloudy.yml`.
public struct Place: Sendable, Equatable {
    /// The `location` label; unique within a config.
    public var name: String
    public var latitude: Double
    public var longitude: Double
    /// IANA zone from the config; when nil the provider's (or geocoder's) zone is used.
    public var timezone: String?
    /// The units this place is shown in (the global `units:` merged with the place's override).
    public var units: UnitSettings

    public init(name: String, latitude: Double, longitude: Double, timezone: String? = nil, units: UnitSettings = .init()) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.timezone = timezone
        self.units = units
    }
}
