import Dispatch
import NIOConcurrencyHelpers

@testable import Cloudy

/// A clock a test moves by hand. `advance(by:)` runs every timer that falls due, in deadline
/// order, each synchronously on its queue with the clock set to its deadline, so when it returns
/// the work the timers started has finished. Call it from the test's thread, never from a queue
/// a timer runs on.
final class ManualClock: ExporterClock {
    private struct Pending {
        let id: Int
        let deadline: Double
        let queue: DispatchQueue
        let action: @Sendable () -> Void
    }

    private struct Timer: ScheduledTimer {
        let id: Int
        let clock: ManualClock
        func cancel() { clock.cancel(id) }
    }

    private let state: NIOLockedValueBox<(now: Double, nextID: Int, pending: [Pending])>

    init(now: Double = 1_781_524_800) {  // 2026-06-15 12:00:00 UTC, the fixtures' time
        state = NIOLockedValueBox((now, 0, []))
    }

    func now() -> Double { state.withLockedValue { $0.now } }

    func schedule(
        after delay: Double, leeway: Double, on queue: DispatchQueue,
        _ action: @escaping @Sendable () -> Void
    ) -> ScheduledTimer {
        let id = state.withLockedValue { state in
            state.nextID += 1
            state.pending.append(
                Pending(id: state.nextID, deadline: state.now + max(0, delay), queue: queue, action: action))
            return state.nextID
        }
        return Timer(id: id, clock: self)
    }

    private func cancel(_ id: Int) {
        state.withLockedValue { $0.pending.removeAll { $0.id == id } }
    }

    /// The earliest timer due by `target`, taken off the list, with the clock moved to its deadline.
    private func takeNextDue(by target: Double) -> Pending? {
        state.withLockedValue { state in
            let due = state.pending.filter { $0.deadline <= target }
            guard let next = due.min(by: { ($0.deadline, $0.id) < ($1.deadline, $1.id) }) else { return nil }
            state.pending.removeAll { $0.id == next.id }
            state.now = max(state.now, next.deadline)
            return next
        }
    }

    /// Deadlines of the timers not yet run, earliest first.
    var pendingDeadlines: [Double] { state.withLockedValue { $0.pending.map(\.deadline).sorted() } }

    /// Moves time forward by `seconds`, running each timer due on the way.
    func advance(by seconds: Double) {
        let target = now() + seconds
        var fired = 0
        while let due = takeNextDue(by: target) {
            fired += 1
            precondition(fired <= 100_000, "ManualClock: a timer keeps re-arming itself without delay")
            due.queue.sync(execute: due.action)
        }
        state.withLockedValue { $0.now = max($0.now, target) }
    }
}
