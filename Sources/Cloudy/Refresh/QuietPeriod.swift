import Foundation

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

    public init(provider: ProviderName, reason: String, until: Double) {
        self.provider = provider
        self.reason = reason
        self.until = until
    }

    /// What a place shows while the period lasts: when it lifts (UTC), and the reason.
    public var description: String {
        "no requests to \(provider.rawValue) until \(Self.utcTime(until)): \(reason)"
    }

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
            let date = Date(timeIntervalSince1970: now)
            let month = utcCalendar.dateComponents([.year, .month], from: date)
            let start = utcCalendar.date(from: month) ?? date
            let next = utcCalendar.date(byAdding: .month, value: 1, to: start) ?? date.addingTimeInterval(31 * 86400)
            return next.timeIntervalSince1970 + resetMargin
        }
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    /// `2026-06-16 00:01:00 UTC`.
    static func utcTime(_ seconds: Double) -> String {
        let parts = utcCalendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds.rounded(.up)))
        func two(_ value: Int?) -> String { String(value ?? 0).leftPadded(to: 2) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) UTC"
    }
}
