/// `warnings:`: which national weather services are asked for the official warnings in force
/// at each place, and how often. Off (no sources) unless the block lists some.
public struct WarningSettings: Sendable, Equatable {
    /// Seconds between two asks of each source (`warnings.interval`).
    public var interval: Double
    public var sources: [WarningSourceSettings]

    public init(interval: Double = 300, sources: [WarningSourceSettings] = []) {
        self.interval = interval
        self.sources = sources
    }

    /// The sources `place` asks: its own `warnings:` list when it has one, else every configured
    /// source whose area (`WarningArea`) holds the place's coordinates. None for a `city:` place
    /// the geocoder has not found yet.
    public func sources(for place: Place) -> [WarningSourceSettings] {
        if let chosen = place.warningSources {
            return sources.filter { chosen.contains($0.name) }
        }
        guard place.isLocated else { return [] }
        return sources.filter { WarningArea.covers($0.name, latitude: place.latitude, longitude: place.longitude) }
    }
}

/// One entry of `warnings.sources`.
public struct WarningSourceSettings: Sendable, Equatable {
    public var name: WarningSourceName
    /// Base URL without a trailing slash.
    public var url: String

    public init(name: WarningSourceName, url: String? = nil) {
        self.name = name
        self.url = url ?? name.defaultURL
    }

    /// Whether `url` is the service's own public host, where its fair-use rules apply.
    public var isPublicHost: Bool { ProviderSettings.isPublicHost(url, of: name.defaultURL) }
}

/// The sources Cloudy asks for warnings itself (the `source` label of their series).
public enum WarningSourceName: String, Sendable, CaseIterable {
    /// The US National Weather Service, api.weather.gov.
    case nws
    /// MET Norway's MetAlerts 2.0.
    case metNorway = "met-norway"
    /// Deutscher Wetterdienst, through Bright Sky's JSON API.
    case dwd

    /// Its requests' `provider` in `cloudy_exporter_upstream_requests_total`: MET Norway's
    /// MetAlerts apart from MET Norway's forecast, so an error ratio never mixes the two APIs.
    public var upstreamLabel: String { self == .metNorway ? "met-norway-metalerts" : rawValue }

    public var defaultURL: String {
        switch self {
        case .nws: return "https://api.weather.gov"
        case .metNorway: return "https://api.met.no"
        case .dwd: return "https://api.brightsky.dev"
        }
    }
}
