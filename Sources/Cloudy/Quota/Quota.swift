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
}

/// How many calls a provider allows per window, as it counts them; a window without a limit is
/// absent. Open-Meteo counts fractional calls, so limits and costs are `Double`.
public struct Quota: Sendable, Equatable {
    public var limits: [QuotaWindow: Double]

    public init(limits: [QuotaWindow: Double] = [:]) {
        self.limits = limits
    }

    public static let unlimited = Quota()
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

    /// The budget `config` puts this process under.
    // TODO(issue 16, plan): the cost formula and the quota in force; until then, no quota.
    public static func of(_ config: Config) -> CallBudget {
        CallBudget(quota: .unlimited, callsPerPlace: 1)
    }
}
