/// A window a provider counts calls in.
public enum QuotaWindow: String, Sendable, CaseIterable {
    case minute, hour, day, month

    /// The window's length in seconds, for planning (a month is taken as 30 days).
    public var seconds: Double {
        switch self {
        case .minute: return 60
        case .hour: return 3_600
        case .day: return 86_400
        case .month: return 30 * 86_400
        }
    }

    /// Its key under `provider.quota` in cloudy.yml.
    public var configKey: String { "per_\(rawValue)" }
}

/// How many calls a provider allows per window, as it counts them; a window without a limit is
/// absent. Open-Meteo counts fractional calls, so limits and costs are `Double`.
public struct Quota: Sendable, Equatable {
    public var limits: [QuotaWindow: Double]

    public init(limits: [QuotaWindow: Double] = [:]) {
        self.limits = limits
    }

    public static let unlimited = Quota()

    /// The share of this quota each of `count` processes that share it may spend.
    public func divided(by count: Int) -> Quota {
        Quota(limits: limits.mapValues { $0 / Double(max(1, count)) })
    }

    /// The published free tier of a provider's public host, or `unlimited` for a commercial
    /// key (Open-Meteo's `customer-` hosts, or any key on its free host, which is redirected
    /// there), a self-hosted URL and MET Norway (no quota; its 20 requests a second are kept by
    /// the provider). OpenWeatherMap cannot tell a free key from a paid one: its public host
    /// gets the free plan, and a paid plan states its own `provider.quota`; so does Pirate
    /// Weather (Dark Sky), whose free plan allows 10,000 calls a month per key.
    public static func freeTier(_ provider: ProviderSettings) -> Quota {
        switch provider.name {
        case .openMeteo where provider.isPublicHost && provider.apiKey == nil:
            return Quota(limits: [.minute: 600, .hour: 5_000, .day: 10_000, .month: 300_000])
        case .openWeatherMap where provider.isPublicHost:
            // One Call 3.0's "One Call by Call" subscription: 1,000 calls a day free.
            return provider.oneCall
                ? Quota(limits: [.day: 1_000]) : Quota(limits: [.minute: 60, .month: 1_000_000])
        case .darkSky where provider.isPublicHost:
            return Quota(limits: [.month: 10_000])
        default:
            return .unlimited
        }
    }
}

/// What this process may spend on its provider: the quota it plans for (its own share when
/// shards share one), and what fetching one place costs in one refresh, as the provider counts.
public struct CallBudget: Sendable, Equatable {
    public var quota: Quota
    public var callsPerPlace: Double

    public init(quota: Quota, callsPerPlace: Double) {
        self.quota = quota
        self.callsPerPlace = callsPerPlace
    }

    /// The budget `config` puts this process under: the quota it states (`provider.quota`) or
    /// else the provider's free tier, divided by the shard count unless `per_shard: true`, and
    /// the cost of one place per refresh from what the provider is asked (`CallCost`).
    public static func of(_ config: Config) -> CallBudget {
        CallBudget(
            quota: config.replicaShare(of: config.quota.stated ?? Quota.freeTier(config.provider)),
            callsPerPlace: CallCost.perPlace(config))
    }

    /// What one refresh of `places` places costs.
    public func callsPerRefresh(places: Int) -> Double {
        Double(places) * callsPerPlace
    }
}

extension Config {
    /// How many replicas split a quota: the shard count, or 1 with `provider.quota.per_shard:
    /// true` (each shard its own egress address or key).
    var quotaShares: Int { quota.perShard ? 1 : shard.count }

    /// `quota` as this replica may spend it: its share when shards split it, else all of it.
    func replicaShare(of quota: Quota) -> Quota {
        quota.divided(by: quotaShares)
    }
}
