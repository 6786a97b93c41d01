/// What a config's schedule spends against the quota in force, worked out before anything is
/// sent: the calls of one refresh (`CallBudget`), the calls each window gets at an interval, and
/// the shortest interval that keeps every window within `margin` of its limit.
///
/// Counting a window: Open-Meteo resets its counters on the minute, the hour and UTC midnight,
/// so a window of length W sees at most ⌈W / interval⌉ refreshes. Windows longer than the
/// interval get one refresh more, reserved for the start-up's network retries: an attempt that
/// failed on DNS, connect or TLS never reached the provider and costs nothing, but the attempt
/// that gets through can fall closer than one interval to the next refresh. A refresh that costs
/// more than a window allows is paced across windows (the Refresher spreads its requests), so
/// that window gets at most its allowance.
public struct RefreshPlan: Sendable, Equatable {
    /// The share of each limit a plan may use: 10 % stays free for what the plan cannot see
    /// (another client behind the same address, a restart).
    public static let margin = 0.9

    public var provider: ProviderName
    public var places: Int
    public var budget: CallBudget
    /// The interval the plan is for (seconds).
    public var interval: Double
    /// Whether the quota was stated in the config (`provider.quota`) or is the free tier's.
    public var quotaIsStated: Bool
    /// The shard count the quota is divided by (1 when not sharded or `per_shard: true`).
    public var shareOf: Int

    public init(_ config: Config) {
        provider = config.provider.name
        places = config.places.count
        budget = CallBudget.of(config)
        interval = config.refresh.interval
        quotaIsStated = config.quota.stated != nil
        shareOf = config.quota.perShard ? 1 : config.shard.count
    }

    public var callsPerRefresh: Double { budget.callsPerRefresh(places: places) }

    /// Calls `window` gets at `interval` (default: the plan's).
    public func planned(_ window: QuotaWindow, interval: Double? = nil) -> Double {
        let interval = interval ?? self.interval
        let cost = callsPerRefresh
        guard cost > 0, interval > 0 else { return 0 }
        if let limit = budget.quota.limits[window], cost > Self.margin * limit {
            // Paced: the window gets its allowance while a refresh runs, less when they are far apart.
            return min(cost * window.seconds / interval, Self.margin * limit)
        }
        // A whisker below the ceiling, so that 86,400 / 600 counts 144 refreshes, not 145.
        let refreshes = (window.seconds / interval - 1e-9).rounded(.up)
        return cost * (refreshes + (interval < window.seconds ? 1 : 0))
    }

    /// The shortest interval (whole seconds) at which `window` stays within `margin` of its
    /// limit, or nil when it has none.
    public func shortestInterval(for window: QuotaWindow) -> Double? {
        guard let limit = budget.quota.limits[window], callsPerRefresh > 0 else { return nil }
        let allowance = Self.margin * limit
        let refreshes = (allowance / callsPerRefresh).rounded(.down)
        let seconds: Double
        switch refreshes {
        case 2...: seconds = window.seconds / (refreshes - 1)  // ⌈W/I⌉ + 1 reserved ≤ refreshes
        case 1: seconds = window.seconds
        default: seconds = window.seconds * callsPerRefresh / allowance  // paced across windows
        }
        return (seconds - 1e-6).rounded(.up)
    }

    /// The shortest interval that fits every window, or nil when nothing limits it.
    public var shortestFittingInterval: Double? {
        QuotaWindow.allCases.compactMap { shortestInterval(for: $0) }.max()
    }

    /// Whether the plan's interval keeps every window within `margin` of its limit.
    public var fits: Bool {
        shortestFittingInterval.map { interval >= $0 } ?? true
    }

    /// The window that decides the interval (the one needing the longest), else the most used one.
    var tightestWindow: QuotaWindow? {
        let limited = QuotaWindow.allCases.filter { budget.quota.limits[$0] != nil }
        if !fits {
            return limited.max { (shortestInterval(for: $0) ?? 0) < (shortestInterval(for: $1) ?? 0) }
        }
        return limited.max { planned($0) / budget.quota.limits[$0]! < planned($1) / budget.quota.limits[$1]! }
    }

    /// One line, e.g. `100 places, open-meteo: 290 calls per refresh, 42,050 a day at 10m; the
    /// free quota allows 10,000 a day: needs 48m or more`.
    public var summary: String {
        let window = tightestWindow ?? .day
        var line =
            "\(places) \(places == 1 ? "place" : "places"), \(provider.rawValue): "
            + "\(Self.number(callsPerRefresh)) calls per refresh, "
            + "\(Self.number(planned(window))) a \(window.rawValue) at \(PrometheusDuration.format(interval))"
        guard let limit = budget.quota.limits[window] else { return line + "; no quota" }
        let source = quotaIsStated ? "provider.quota" : "the free quota"
        let whose = shareOf > 1 ? "this shard's 1/\(shareOf) share of \(source)" : source
        line += "; \(whose) allows \(Self.number(limit)) a \(window.rawValue)"
        if let needed = shortestFittingInterval, interval < needed {
            return line + ": needs \(PrometheusDuration.format(needed)) or more"
        }
        let used = Int((planned(window) / limit * 100).rounded())
        return line + ": fits (\(used) % of it)"
    }

    /// A count as people write it: thousands separated by commas, at most two decimals.
    static func number(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        var whole = String(hundredths / 100)
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        grouped = whole + grouped
        let fraction = hundredths % 100
        guard fraction != 0 else { return grouped }
        let digits = fraction % 10 == 0 ? String(fraction / 10) : String(fraction).leftPadded(to: 2)
        return grouped + "." + digits
    }
}
