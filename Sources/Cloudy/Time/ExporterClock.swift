import Dispatch
import Foundation

/// Time as the exporter sees it: the wall clock, and one-shot timers on a Dispatch queue.
/// Everything that schedules or expires (the refresh timer, back-off, staleness, MET's
/// `Expires`, OpenWeatherMap's call spacing, the geocoder's retries) asks this instead of
/// `Date()`, so tests can hand in a `ManualClock` and advance time without waiting.
public protocol ExporterClock: Sendable {
    /// Seconds since the Unix epoch.
    func now() -> Double
    /// Runs `action` on `queue` once, `delay` seconds from now (at once when `delay` ≤ 0),
    /// unless the returned timer is cancelled first. `leeway` is how late it may fire.
    func schedule(
        after delay: Double, leeway: Double, on queue: DispatchQueue,
        _ action: @escaping @Sendable () -> Void
    ) -> ScheduledTimer
}

/// A timer handed out by `ExporterClock.schedule`.
public protocol ScheduledTimer: Sendable {
    /// Stops the action from running if it has not yet started.
    func cancel()
}

/// The production clock: `Date()` and `DispatchSourceTimer`.
public struct SystemClock: ExporterClock {
    public init() {}

    public func now() -> Double { Date().timeIntervalSince1970 }

    public func schedule(
        after delay: Double, leeway: Double, on queue: DispatchQueue,
        _ action: @escaping @Sendable () -> Void
    ) -> ScheduledTimer {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + max(0, delay), leeway: .nanoseconds(Int(max(0, leeway) * 1e9)))
        source.setEventHandler(handler: action)
        source.resume()
        return DispatchTimer(source: source)
    }

    private struct DispatchTimer: ScheduledTimer, @unchecked Sendable {
        let source: DispatchSourceTimer
        func cancel() { source.cancel() }
    }
}
