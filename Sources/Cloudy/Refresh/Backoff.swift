/// When the next refresh may run after the provider failed: the wait doubles with each refresh
/// in a row that failed for every place (interval, 2×, 4×, … up to `bound`), with ±20 % jitter
/// so that replicas do not retry in step, and never before a `Retry-After` the provider sent.
/// One success returns to the plain interval.
public struct Backoff: Sendable, Equatable {
    /// The interval in force. A reload that changes it works the wait after the last failure
    /// out again at the new one: lowered from a day (or a typo's `30d`) to five minutes, a
    /// failure's day-long wait would otherwise hold the new schedule for the rest of the day.
    public var interval: Double {
        didSet { if failures > 0 { backedOffUntil = lastFailure + wait(jitter: lastJitter) } }
    }
    /// The longest wait: four intervals, but at least a minute — long enough to spare a
    /// struggling provider, short enough to notice its recovery within a few intervals.
    public var bound: Double { max(4 * interval, 60) }
    public private(set) var failures = 0
    /// Unix seconds before which no request goes to the provider.
    public var notBefore: Double { max(backedOffUntil, askedToWaitUntil, heldUntil) }
    /// Unix seconds before which the provider itself asked not to be asked (`Retry-After`): the
    /// part of `notBefore` that a restart on the same server keeps.
    public private(set) var askedToWaitUntil: Double = 0
    /// The part of `notBefore` the failures in a row ask for, and when the last one was, with
    /// its jitter.
    private var backedOffUntil: Double = 0
    private var lastFailure: Double = 0
    private var lastJitter: Double = 0
    /// The part of `notBefore` a hold asks for (`hold(until:)`: a quiet period).
    private var heldUntil: Double = 0

    /// What a reload that rebuilt the upstream's source does to its back-off.
    public enum Restart: Sendable, Equatable {
        /// Another server: the old one's failures and `Retry-After` say nothing of it.
        case afresh
        /// The same server (its source removed and added back, or its other settings changed):
        /// the failures are forgotten, so it is asked at once, unless its `Retry-After` still holds.
        case keepingRetryAfter
    }

    public init(interval: Double) {
        self.interval = interval
    }

    public mutating func recordSuccess() {
        failures = 0
        backedOffUntil = 0
        askedToWaitUntil = 0
        heldUntil = 0
    }

    /// The back-off after `restart`, at `interval`.
    public func restarted(_ restart: Restart, interval: Double) -> Backoff {
        var fresh = Backoff(interval: interval)
        if restart == .keepingRetryAfter { fresh.askedToWaitUntil = askedToWaitUntil }
        return fresh
    }

    /// `jitter` is uniform in 0…1 (a parameter so tests can pin it).
    public mutating func recordFailure(now: Double, retryAfter: Double?, jitter: Double) {
        failures += 1
        (lastFailure, lastJitter) = (now, jitter)
        backedOffUntil = now + wait(jitter: jitter)
        heldUntil = 0  // the failure's wait is the one in force, as a request went out
        if let retryAfter, retryAfter.isFinite {
            let asked = min(retryAfter, Self.longestRetryAfter)
            askedToWaitUntil = max(askedToWaitUntil, now + asked)
        }
    }

    /// The wait after the last of `failures` in a row at the interval in force.
    private func wait(jitter: Double) -> Double {
        min(bound, interval * Double(1 << min(failures - 1, 20))) * (0.8 + 0.4 * jitter)
    }

    /// The longest `Retry-After` honoured: a day (a header asking for more is taken as a day).
    static let longestRetryAfter: Double = 86400

    /// Holds every request back for the `Retry-After` a provider sent, without counting a
    /// failure (other places were answered).
    public mutating func hold(retryAfter: Double, now: Double) {
        guard retryAfter.isFinite else { return }
        askedToWaitUntil = max(askedToWaitUntil, now + min(retryAfter, Self.longestRetryAfter))
        hold(until: askedToWaitUntil)
    }

    /// Holds every request back until `until` (a quiet period the provider's quota asked for)
    /// without counting a failure: the provider is fine, Cloudy asked too much.
    public mutating func hold(until: Double) {
        heldUntil = max(heldUntil, until)
    }

    /// When the refresh after one that started at `started` should run: the interval later,
    /// held back by a `Retry-After` or a quiet period. While failing, the back-off's wait, whose
    /// jitter may make it as short as 0.8 × the interval (so replicas that failed together
    /// spread), but never shorter than that of the interval in force (a reload may raise it).
    public func nextRefresh(after started: Double) -> Double {
        max(started + (failures > 0 ? 0.8 : 1) * interval, notBefore)
    }
}
