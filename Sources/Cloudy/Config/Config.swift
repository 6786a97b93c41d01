import Foundation

/// Everything `cloudy.yml` says, validated. Built by `ConfigLoader`; each key is described in
/// docs/configuration.md.
public struct Config: Sendable, Equatable {
    public var provider: ProviderSettings
    public var geocodingURL: String
    public var refresh: RefreshSettings
    /// The global `units:`; each `Place` carries these merged with its own override.
    public var units: UnitSettings
    public var forecast: ForecastSettings
    public var places: [Place]
    /// The replica's share of `places` (`shard:`; `--shard` overrides it).
    public var shard: Shard = .all
    /// `provider.quota`: the quota stated in the config, if any, and whether shards share it.
    /// Kept apart from `provider` so that changing it on reload keeps the provider's caches.
    public var quota = QuotaSettings()
    /// The top-level `alerts:`: every place's thresholds unless its own `alerts:` overrides one.
    public var alerts = AlertThresholds.builtIn
    /// `air_quality:`; nil when the config has none (nothing asked, no air-quality family).
    public var airQuality: AirQualitySettings?
    /// Who set an air-quality threshold when there is no `air_quality:` to compare it with, so
    /// the loader turned it off: `whoSets(.airQuality)`'s words ("", " of Oslo, Bergen"), which
    /// `doubts(at:)` says. nil when no threshold went unused.
    var whoSetUnusedAirQualityThreshold: String?
    /// `air_quality:` is written with no value: off, as an absent key (`{}` turns it on), which
    /// `doubts(at:)` says.
    var airQualityWrittenEmpty = false
    /// `warnings:`: the official warnings' sources and schedule.
    public var warnings = WarningSettings()

    public init(
        provider: ProviderSettings = .init(), geocodingURL: String = "https://geocoding-api.open-meteo.com",
        refresh: RefreshSettings = .init(), units: UnitSettings = .init(), forecast: ForecastSettings = .init(),
        places: [Place]
    ) {
        self.provider = provider
        self.geocodingURL = geocodingURL
        self.refresh = refresh
        self.units = units
        self.forecast = forecast
        self.places = places
    }
}

public enum ProviderName: String, Sendable, CaseIterable {
    case openMeteo = "open-meteo"
    case openWeatherMap = "openweathermap"
    case metNorway = "met-norway"
    /// The Dark Sky forecast API, as Pirate Weather serves it.
    case darkSky = "dark-sky"

    public var defaultURL: String {
        switch self {
        case .openMeteo: return "https://api.open-meteo.com"
        case .openWeatherMap: return "https://api.openweathermap.org"
        case .metNorway: return "https://api.met.no"
        case .darkSky: return "https://api.pirateweather.net"
        }
    }
}

public struct ProviderSettings: Sendable, Equatable {
    public var name: ProviderName
    /// Base URL without a trailing slash.
    public var url: String
    public var apiKeyFile: String?
    /// From `api_key_file`, else the `CLOUDY_API_KEY` environment variable; never printed.
    public var apiKey: Secret?
    public var userAgent: String?
    /// What upstream requests send as `User-Agent`: `user_agent`, else Cloudy's own.
    public var userAgentInUse: String {
        userAgent ?? "cloudy_exporter/\(BuildInfo.version) (+https://\(Self.projectPage))"
    }
    /// Cloudy's own page, in its default `User-Agent`: it names the software, not who runs it.
    static let projectPage = "github.com/cloudy-exporter/cloudy"
    /// OpenWeatherMap only: One Call 3.0 instead of the free 2.5 endpoints.
    public var oneCall = false

    public init(
        name: ProviderName = .openMeteo, url: String? = nil, apiKeyFile: String? = nil, apiKey: Secret? = nil,
        userAgent: String? = nil
    ) {
        self.name = name
        self.url = url ?? name.defaultURL
        self.apiKeyFile = apiKeyFile
        self.apiKey = apiKey
        self.userAgent = userAgent
    }

    /// Whether a provider built from these settings asks what one built from `other` asks: all
    /// but the `User-Agent`, which a reload gives the clients as they are (`Feeds.apply`), so a
    /// new one changes no schedule and empties no cache.
    public func asksAlike(_ other: ProviderSettings) -> Bool {
        var other = other
        other.userAgent = userAgent
        return self == other
    }

    /// Whether `url` is the provider's own public host (`ProviderName.defaultURL`), by http or
    /// https, with or without a path: where its free tier and fair-use rules apply.
    public var isPublicHost: Bool { Self.isPublicHost(url, of: name.defaultURL) }

    /// Whether a key makes the quota another one than without it: Open-Meteo's commercial API
    /// (`QuotaState.keyed`). OpenWeatherMap and Dark Sky are always asked with a key.
    public var spendsAKeysQuota: Bool { name == .openMeteo && apiKey != nil }

    /// The fingerprint of the key the provider counts calls against (`Secret.fingerprint`), nil
    /// without one: another key is another quota (a Dark Sky key's month, an OpenWeatherMap
    /// account's), so quota.json and a reload tell them apart (`QuotaState.key`).
    public var quotaKey: String? { name == .metNorway ? nil : apiKey?.fingerprint }

    /// Whether calls to these settings count on the same quota as to `other`'s: the same
    /// provider, server and key (`QuotaAccount.update` starts another owner afresh otherwise).
    public func countsOnTheSameQuota(as other: ProviderSettings) -> Bool {
        name == other.name && Self.isSameServer(url, other.url) && spendsAKeysQuota == other.spendsAKeysQuota
            && quotaKey == other.quotaKey
    }

    /// Whether `url` names `defaultURL`'s host, by http or https, on any port, with or without
    /// a path (`https://api.open-meteo.com:443/` is the public host too).
    static func isPublicHost(_ url: String, of defaultURL: String) -> Bool {
        guard let publicHost = host(defaultURL) else { return false }
        return host(url) == publicHost
    }

    /// Whether two URLs name one server: the same host on the same port (the scheme's own
    /// when none is written), whatever their paths; `localhost`, `127.0.0.1` and `::1` are one.
    static func isSameServer(_ url: String, _ other: String) -> Bool {
        func port(_ url: String) -> Int? {
            guard let components = URLComponents(string: url) else { return nil }
            return components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        }
        func server(_ url: String) -> String? {
            host(url).map { ["localhost", "127.0.0.1", "::1", "[::1]"].contains($0) ? "loopback" : $0 }
        }
        guard let one = server(url) else { return false }
        return one == server(other) && port(url) == port(other)
    }

    /// The URL's host in lower case without a trailing dot; nil when it names none. As written
    /// (`encodedHost`, punycode for a Unicode name): `host` would decode it through ICU's IDNA,
    /// whose code and tables then stay resident (this runs for every batch a quota counts).
    private static func host(_ url: String) -> String? {
        guard var host = URLComponents(string: url)?.encodedHost?.lowercased(), !host.isEmpty else { return nil }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

public struct RefreshSettings: Sendable, Equatable {
    /// Seconds between refreshes (the Dispatch timer's period).
    public var interval: Double
    /// Seconds one upstream request may take.
    public var timeout: Double
    /// Seconds without a success after which a place's weather series disappear; at least a
    /// refresh's worth (`FairUse.keepStaleAfterPastInterval`).
    public var staleAfter: Double
    /// `refresh.stale_after` was written in the config: raised, it is raised with a warning; the
    /// default follows the interval in use quietly. How the value came, not what it is: not
    /// compared by `==`.
    public var staleAfterIsWritten = false
    /// What to do when the schedule does not fit the quota in force (`refresh.over_quota`).
    public var overQuota: OverQuota
    /// Most batch requests in flight at once against a host that is not a free public one
    /// (`refresh.parallel_requests`); the public hosts get one at a time. Settings built in code
    /// ask one at a time unless they say otherwise; a config file that does not state it gets
    /// `defaultParallelRequests` (`ConfigLoader`).
    public var parallelRequests: Int

    public static let defaultParallelRequests = 4

    public init(
        interval: Double = 600, timeout: Double = 10, staleAfter: Double = 1800, overQuota: OverQuota = .stretch,
        parallelRequests: Int = 1
    ) {
        self.interval = interval
        self.timeout = timeout
        self.staleAfter = staleAfter
        self.overQuota = overQuota
        self.parallelRequests = parallelRequests
    }

    /// Every field but `staleAfterIsWritten`: a field added above belongs here too.
    public static func == (lhs: RefreshSettings, rhs: RefreshSettings) -> Bool {
        lhs.interval == rhs.interval && lhs.timeout == rhs.timeout && lhs.staleAfter == rhs.staleAfter
            && lhs.overQuota == rhs.overQuota && lhs.parallelRequests == rhs.parallelRequests
    }
}

/// `refresh.over_quota`: when the planned calls do not fit a window of the quota in force.
public enum OverQuota: String, Sendable, CaseIterable {
    /// Raise the interval to the shortest one that fits every window with a 10 % margin (logged).
    case stretch
    /// Keep the interval and log a warning at start and on every reload.
    case warn
    /// A config error: the exporter does not start, a reload is refused.
    case refuse
}

/// `provider.quota`: `stated` is nil when the config states none (the provider's free-tier
/// default applies, see `Quota.freeTier`), `Quota.unlimited` for `quota: unlimited`.
public struct QuotaSettings: Sendable, Equatable {
    public var stated: Quota?
    /// `per_shard: true`: every shard has a quota of its own (its own egress address or key);
    /// by default the shards of one deployment share one and each plans for 1/COUNT of it.
    public var perShard: Bool

    public init(stated: Quota? = nil, perShard: Bool = false) {
        self.stated = stated
        self.perShard = perShard
    }
}

public struct ForecastSettings: Sendable, Equatable {
    /// Daily forecast days, day 0 = today (0…16).
    public var days: Int
    /// Hourly forecast hours, hour 1 = the next whole hour (0…383).
    public var hours: Int

    public init(days: Int = 7, hours: Int = 24) {
        self.days = days
        self.hours = hours
    }
}
