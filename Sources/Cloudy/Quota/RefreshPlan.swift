/// What a config's schedule spends against the quota in force, worked out before anything is
/// sent: the calls of one refresh (`CallBudget`), the calls each window gets at an interval, and
/// the shortest interval that keeps every window within `margin` of its limit.
///
/// Counting a window: Open-Meteo resets its counters on the minute, the hour and UTC midnight,
/// so a window of length W sees at most ⌈W / interval⌉ refreshes. The start-up's network retries
/// add none: an attempt that failed on DNS, connect or TLS never reached the provider and costs
/// nothing, and the schedule restarts one interval after the attempt that gets through. A
/// refresh that costs more than a window allows is paced across windows (the Refresher spreads
/// its requests), so that window gets at most its allowance; but a place is never split, so a
/// window whose allowance is less than one place's request gets that place alone, at any
/// interval (`windowBelowOnePlace`).
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
    /// The other feeds that spend the provider's quota on the weather's interval (Open-Meteo's
    /// air quality beside its forecast): the plan counts their calls with the weather's, so the
    /// figures are the quota's, not one feed's.
    public var alongside: [QuotaSpending]
    /// What the summary names the plan for when it is not the weather provider's (an
    /// air-quality source on a quota of its own: `RefreshPlan.airQualityOnItsOwn`).
    public var feed: String?
    /// The `provider` label of such a plan's quota families, the name its calls are counted
    /// under (`open-meteo-air-quality`); nil for the weather provider's, labelled by its name.
    public var upstream: String?

    /// The `provider` label its quota families and calls are shown under.
    public var providerLabel: String { upstream ?? provider.rawValue }

    /// The plan of `config`, with the feeds it runs beside the weather on the same quota
    /// (`QuotaSpending.alongside`) unless `alongside` names them.
    public init(_ config: Config, alongside: [QuotaSpending]? = nil) {
        provider = config.provider.name
        places = config.places.count
        budget = CallBudget.of(config)
        interval = config.refresh.interval
        quotaIsStated = config.quota.stated != nil
        shareOf = config.quotaShares
        self.alongside = alongside ?? QuotaSpending.alongside(config)
    }

    /// What one refresh of every feed on the quota costs.
    public var callsPerRefresh: Double {
        budget.callsPerRefresh(places: places) + alongside.reduce(0) { $0 + Double(places) * $1.callsPerPlace }
    }

    /// The costliest request of one place among the feeds on the quota: pacing sends at least
    /// one place at a time, so a window that gets any gets at least this much.
    public var callsPerPlaceAtMost: Double {
        alongside.reduce(budget.callsPerPlace) { max($0, $1.callsPerPlace) }
    }

    /// The shortest window whose allowance (90 % of its limit) is less than one place's request:
    /// no interval keeps it within the margin (a tiny stated quota, or a shard's share of one).
    public var windowBelowOnePlace: QuotaWindow? {
        guard places > 0 else { return nil }
        return QuotaWindow.allCases.first { window in
            budget.quota.limits[window].map { callsPerPlaceAtMost > Self.margin * $0 + 1e-9 } ?? false
        }
    }

    /// Calls `window` gets at `interval` (default: the plan's).
    public func planned(_ window: QuotaWindow, interval: Double? = nil) -> Double {
        let interval = interval ?? self.interval
        let cost = callsPerRefresh
        guard cost > 0, interval > 0 else { return 0 }
        if let limit = budget.quota.limits[window], cost >= Self.margin * limit - 1e-9 {
            // Paced: the window gets its allowance while a refresh runs, less when they are far
            // apart; one place alone when the allowance is less than its request. A refresh that
            // costs the allowance exactly fills the window once per refresh, like a dearer one:
            // not every window at 90 %, which CloudyUpstreamQuotaNearlySpent would take for a
            // schedule kept over the quota.
            let paced = min(cost * window.seconds / interval, Self.margin * limit)
            return callsPerPlaceAtMost > Self.margin * limit ? max(paced, callsPerPlaceAtMost) : paced
        }
        // A whisker below the ceiling, so that 86,400 / 600 counts 144 refreshes, not 145; the
        // product to a millionth, so the page shows 1670.4 rather than 1670.3999999999999.
        let calls = cost * (window.seconds / interval - 1e-9).rounded(.up)
        return CallCost.rounded(calls)
    }

    /// The shortest interval (whole seconds) at which `window` stays within `share` of its
    /// limit, or nil when it has none.
    public func shortestInterval(for window: QuotaWindow, share: Double = margin) -> Double? {
        guard let limit = budget.quota.limits[window], callsPerRefresh > 0 else { return nil }
        let allowance = share * limit
        var refreshes = (allowance / callsPerRefresh).rounded(.down)
        // Within the margin means below it: a plan at exactly 90 % would wake the alert that
        // watches for 90 % (CloudyUpstreamQuotaNearlySpent).
        if share < 1, refreshes >= 1, refreshes * callsPerRefresh >= allowance - 1e-9 { refreshes -= 1 }
        // ⌈W / I⌉ ≤ n exactly when I ≥ W / n; with no whole refresh in the allowance, paced.
        let seconds = refreshes >= 1 ? window.seconds / refreshes : window.seconds * callsPerRefresh / allowance
        return (seconds - 1e-6).rounded(.up)
    }

    /// The shortest interval that keeps every window within `share` of its limit (by default the
    /// margin `stretch` keeps), or nil when nothing limits it.
    public func shortestFittingInterval(share: Double = margin) -> Double? {
        QuotaWindow.allCases.compactMap { shortestInterval(for: $0, share: share) }.max()
    }

    /// Whether the plan's interval keeps every window within `margin` of its limit.
    public var fits: Bool {
        windowBelowOnePlace == nil && (shortestFittingInterval().map { interval >= $0 } ?? true)
    }

    /// The window that decides the interval (the one needing the longest), else the most used one.
    var tightestWindow: QuotaWindow? {
        if let small = windowBelowOnePlace { return small }
        let limited = QuotaWindow.allCases.filter { budget.quota.limits[$0] != nil }
        if !fits {
            return limited.max { (shortestInterval(for: $0) ?? 0) < (shortestInterval(for: $1) ?? 0) }
        }
        return limited.max { planned($0) / budget.quota.limits[$0]! < planned($1) / budget.quota.limits[$1]! }
    }

    /// One line, e.g. `100 places, open-meteo: 290 calls per refresh, 41,760 a day at 10m; the
    /// free quota allows 10,000 a day: needs 42m22s or more (46m28s keeps a 10 % margin)`; with
    /// air quality on the same quota `… 290 calls per refresh + air quality 160 = 450, 64,800 a day …`;
    /// with a window too small for one place `…; provider.quota allows 2 a minute: one place alone
    /// is 2.9 calls, 145 % of it, at any interval`.
    /// "a minute", "an hour", "a day", "a month".
    static func per(_ window: QuotaWindow) -> String {
        (window == .hour ? "an " : "a ") + window.rawValue
    }

    public var summary: String {
        let window = tightestWindow ?? .day
        var line =
            "\(places) \(places == 1 ? "place" : "places"), \(feed ?? provider.rawValue): \(callsLine), "
            + "\(Self.number(planned(window))) \(Self.per(window)) at \(PrometheusDuration.format(interval))"
        guard let limit = budget.quota.limits[window] else { return line + "; no quota" }
        let source = quotaIsStated ? "provider.quota" : "the free quota"
        let whose = shareOf > 1 ? "this shard's 1/\(shareOf) share of \(source)" : source
        line += "; \(whose) allows \(Self.number(limit)) \(Self.per(window))"
        let used = Int((planned(window) / limit * 100).rounded())
        if window == windowBelowOnePlace {
            let onePlace = Self.number(callsPerPlaceAtMost)
            return line
                + ": one place alone is \(onePlace) \(onePlace == "1" ? "call" : "calls"), \(used) % of it, at any interval"
        }
        guard let kept = shortestFittingInterval(), interval < kept else { return line + ": fits (\(used) % of it)" }
        let keeping = "\(PrometheusDuration.format(kept)) keeps a \(Int(((1 - Self.margin) * 100).rounded())) % margin"
        if let needed = shortestFittingInterval(share: 1), interval < needed {
            return line + ": needs \(PrometheusDuration.format(needed)) or more (\(keeping))"
        }
        return line + ": \(used) % of it; \(keeping)"
    }

    /// `290 calls per refresh`, or with other feeds on the quota the weather's calls, each
    /// feed's and the sum: `290 calls per refresh + air quality 160 = 450`.
    private var callsLine: String {
        let calls = Self.number(budget.callsPerRefresh(places: places))
        let weather = "\(calls) \(calls == "1" ? "call" : "calls") per refresh"
        guard !alongside.isEmpty else { return weather }
        let others = alongside.map { " + \($0.feed) \(Self.number(Double(places) * $0.callsPerPlace))" }
        return weather + others.joined() + " = \(Self.number(callsPerRefresh))"
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
