/// The calls this process has spent on its provider, as the provider counts them, kept over the
/// longest window its quota limits: what pacing checks before each batch, so a refresh also
/// respects what earlier refreshes spent. Windows slide: a batch fits when, for every limited
/// window, the calls of the last window's length plus the batch stay within the limit, which
/// keeps any fixed window the provider counts in (minute, UTC hour, UTC day) within it too.
public struct CallLedger: Sendable, Equatable, Codable {
    /// One batch's calls, or several merged, stamped with the latest time among them.
    struct Spending: Sendable, Equatable, Codable {
        var time: Double
        var calls: Double
    }

    /// The last two hours, one entry per batch (the minute and hour windows are exact).
    private var recent: [Spending] = []
    /// Two hours to two days old, merged per minute (the day window is exact within a minute).
    private var minutes: [Spending] = []
    /// Older, merged per hour (the month window counts them up to an hour longer).
    private var hours: [Spending] = []

    public init() {}

    /// Every entry, oldest first.
    var entries: [Spending] { hours + minutes + recent }

    /// Whether every entry is a finite time with finite, non-negative calls, oldest first (what
    /// `record` keeps; a ledger read back from a file is checked with it).
    var isValid: Bool {
        let all = entries
        return all.allSatisfy { $0.time.isFinite && $0.calls.isFinite && $0.calls >= 0 }
            && zip(all, all.dropFirst()).allSatisfy { $0.time <= $1.time }
    }

    /// Records `calls` spent at `time`, and forgets what is older than `horizon` seconds. Merged
    /// entries count a little longer, never shorter, and the ledger stays small: about 3,500
    /// entries for a month of batches every few seconds. A time before the last entry's (the
    /// wall clock stepped back, or two feeds of the account settled out of the order they read
    /// the clock in) moves every entry back with it, the last to `time`: what was spent keeps
    /// its age, as if the last batch had just gone out (never younger), and the ledger stays in
    /// order (`isValid`), or the next start would throw `quota.json` away.
    public mutating func record(_ calls: Double, at time: Double, keeping horizon: Double) {
        guard calls > 0 else { return }
        if let last = entries.last?.time, time < last {
            for tier in [\CallLedger.hours, \.minutes, \.recent] {
                for index in self[keyPath: tier].indices { self[keyPath: tier][index].time -= last - time }
            }
        }
        recent.append(Spending(time: time, calls: calls))
        Self.move(from: &recent, olderThan: time - 7200, into: &minutes, bucket: 60)
        Self.move(from: &minutes, olderThan: time - 2 * 86400, into: &hours, bucket: 3600)
        for tier in [\CallLedger.hours, \.minutes, \.recent] {
            let expired = self[keyPath: tier].prefix { $0.time <= time - horizon }.count
            if expired > 0 { self[keyPath: tier].removeFirst(expired) }
        }
    }

    /// Moves the entries of `tier` older than `limit` to the end of `older`, merged per `bucket`.
    private static func move(
        from tier: inout [Spending], olderThan limit: Double, into older: inout [Spending], bucket: Double
    ) {
        let count = tier.prefix { $0.time < limit }.count
        guard count > 0 else { return }
        for entry in tier.prefix(count) {
            if let last = older.last, (last.time / bucket).rounded(.down) == (entry.time / bucket).rounded(.down) {
                older[older.count - 1] = Spending(time: entry.time, calls: last.calls + entry.calls)
            } else {
                older.append(entry)
            }
        }
        tier.removeFirst(count)
    }

    /// Calls spent in the `seconds` up to `now`: the window (now − seconds, now]. Calls stamped
    /// after `now` count too, up to a window ahead: the wall clock stepped back since, and they
    /// were spent all the same (the next `record` moves them back with the clock).
    public func spent(inLast seconds: Double, at now: Double) -> Double {
        var sum = 0.0
        for tier in [recent, minutes, hours] {
            for entry in tier.reversed() {
                if entry.time <= now - seconds { return sum }
                if entry.time <= now + seconds { sum += entry.calls }
            }
        }
        return sum
    }

    /// How many places costing `callsPerPlace` each can be asked at `now` without any window of
    /// `quota` going over its limit (`Int.max` without limits). A place costing more than a
    /// whole window allows goes alone, once that window has nothing else in it.
    public func affordablePlaces(callsPerPlace: Double, quota: Quota, at now: Double) -> Int {
        var affordable = Int.max
        let cost = max(callsPerPlace, 1e-9)
        for (window, limit) in quota.limits {
            let spent = spent(inLast: window.seconds, at: now)
            let fit: Int
            if cost > limit {
                fit = spent <= 1e-9 ? 1 : 0
            } else {
                let room = (limit - spent + 1e-9) / cost
                fit = room < 1 ? 0 : room >= Double(Int.max / 2) ? Int.max : Int(room.rounded(.down))
            }
            affordable = min(affordable, fit)
        }
        return affordable
    }

    /// The earliest moment from `now` on when at least one place fits: `now` itself, or when a
    /// past batch leaves a window.
    public func nextRoom(callsPerPlace: Double, quota: Quota, after now: Double) -> Double {
        if affordablePlaces(callsPerPlace: callsPerPlace, quota: quota, at: now) > 0 { return now }
        let all = entries
        let expiries = quota.limits.keys.flatMap { window in all.map { $0.time + window.seconds } }
            .filter { $0 > now }.sorted()
        // Room only grows as time passes (nothing is added meanwhile): the first expiry with room
        // is found by bisection. After the last expiry every window is empty, so one place fits.
        var low = 0
        var high = expiries.count - 1
        while low < high {
            let middle = (low + high) / 2
            if affordablePlaces(callsPerPlace: callsPerPlace, quota: quota, at: expiries[middle]) > 0 {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return expiries.isEmpty ? now : expiries[low]
    }
}
