/// A time in which the provider refuses requests for its quota, and Cloudy sends it none: from
/// a quota 429 until the window it named starts afresh (or `Retry-After`, whichever is later).
/// Every place shows it (`/readyz`, `/`), and the log says it once, when it starts.
public struct QuietPeriod: Sendable, Equatable, Codable {
    public var provider: ProviderName
    /// The refusal as the provider answered it, e.g. `open-meteo: HTTP 429: Daily API request
    /// limit exceeded. Please try again tomorrow.`
    public var reason: String
    /// Unix seconds from which requests go out again.
    public var until: Double
    /// Who is not asked, when not the provider's own API: an air-quality source on a quota of
    /// its own (`open-meteo-air-quality`), while the weather goes on asking the provider.
    public var upstream: String?

    public init(provider: ProviderName, reason: String, until: Double, upstream: String? = nil) {
        self.provider = provider
        self.reason = reason
        self.until = until
        self.upstream = upstream
    }

    /// What a place shows while the period lasts: when it lifts (UTC), and the reason.
    public var description: String {
        "no requests to \(upstream ?? provider.rawValue) until \(Self.utcTime(until)): \(reason)"
    }

    /// The latest a refusal of `provider` at `now` can hold requests back: a day (the longest
    /// `Retry-After` honoured, and Open-Meteo's longest window), or Dark Sky's month (its key's
    /// own, which `RateLimit-Reset` counts to: at most `longestMonth`). A period kept in
    /// `quota.json` is held to it, so no file (from an older version, or edited) can silence
    /// the exporter longer.
    static func latestLift(of provider: ProviderName, now: Double) -> Double {
        provider == .darkSky
            ? now + longestMonth + resetMargin : max(now + Backoff.longestRetryAfter, lift(after: .day, now: now))
    }

    /// The longest a month's quota can take to start afresh: a `RateLimit-Reset` longer than
    /// this is taken as this.
    static let longestMonth = 31 * 86_400.0

    /// How long after a window's boundary requests resume. Open-Meteo's server clears its
    /// counters from a timer that runs once a minute, the hourly and daily ones in the first
    /// minute after the boundary; a minute also covers a client clock a few seconds fast.
    static let resetMargin = 60.0

    /// When requests may resume after the provider refused at `now` for `window`: a full minute
    /// later for the minutely limit (the server's minute counter is cleared once a minute at a
    /// phase of its own), else a minute after the next UTC hour, UTC midnight or first of the month.
    public static func lift(after window: QuotaWindow, now: Double) -> Double {
        switch window {
        case .minute: return now + resetMargin
        case .hour: return (now / 3600).rounded(.down) * 3600 + 3600 + resetMargin
        case .day: return (now / 86400).rounded(.down) * 86400 + 86400 + resetMargin
        case .month:
            let (year, month, _) = HTTPDate.civilFromDays(Int((now / 86400).rounded(.down)))
            let next = HTTPDate.daysFromCivil(year: month == 12 ? year + 1 : year, month: month % 12 + 1, day: 1)
            return Double(next) * 86400 + resetMargin
        }
    }

    /// `2026-06-16 00:01:00 UTC`: the second `seconds` falls in, so nothing goes out before the
    /// time shown (a request at 00:01:00.4 is shown as 00:01:00, as clocks show it).
    static func utcTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let days = Int((Double(whole) / 86400).rounded(.down))
        let (year, month, day) = HTTPDate.civilFromDays(days)
        let rest = whole - days * 86400
        func two(_ value: Int) -> String { String(value).leftPadded(to: 2) }
        return "\(year)-\(two(month))-\(two(day)) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) UTC"
    }
}
