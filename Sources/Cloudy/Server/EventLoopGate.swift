import NIOConcurrencyHelpers
import NIOCore

/// Lets work done off the event loops (a reload, a bcrypt login check) hand its answer back to
/// a loop while the server serves. `HTTPServer` closes it once it has stopped, before the
/// event-loop group shuts down: a reload, or a queue of login checks, that outlasts the stop's
/// grace then drops its answer (the connection closes with the loops, unanswered). A task for a
/// loop already shut down is NIO's "Cannot schedule tasks", a crash under `SWIFTNIO_STRICT`.
final class EventLoopGate: Sendable {
    private let state = NIOLockedValueBox((open: true, dropped: 0))

    /// Runs `task` on `loop` unless the gate is closed. The lock is held while the task is queued,
    /// so none is queued after `close()` returns.
    func execute(on loop: EventLoop, _ task: @escaping @Sendable () -> Void) {
        state.withLockedValue { state in
            guard state.open else {
                state.dropped += 1
                return
            }
            loop.execute(task)
        }
    }

    func close() {
        state.withLockedValue { $0.open = false }
    }

    /// How many answers came back after `close()`.
    var dropped: Int { state.withLockedValue { $0.dropped } }
}
