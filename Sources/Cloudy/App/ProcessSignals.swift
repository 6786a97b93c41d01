import Dispatch
import Foundation
import Logging

/// SIGTERM/SIGINT (stop) and SIGHUP (reload) through Dispatch signal sources, installed first
/// thing at start-up. A signal that arrives before its action is set is remembered and acted
/// on as soon as it is (a stop during start-up stops right after start-up; a reload asked for
/// after the config was read reads it again).
final class ProcessSignals: @unchecked Sendable {
    /// What one kind of signal does: its action once set, and whether it arrived before that.
    private struct Reaction {
        var action: (@Sendable () -> Void)?
        var pending = false

        /// The signal arrived: the action to run now, or nil (it is remembered until `set`).
        mutating func arrived() -> (@Sendable () -> Void)? {
            pending = action == nil
            return action
        }

        /// Sets the action; true when the signal arrived before it (run it now).
        mutating func set(_ new: @escaping @Sendable () -> Void) -> Bool {
            action = new
            defer { pending = false }
            return pending
        }
    }

    private let lock = NSLock()
    private var sources: [DispatchSourceSignal] = []
    private var stop = Reaction()
    private var hangup = Reaction()

    init(logger: Logger) {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                if number != SIGHUP {
                    logger.info("stopping", metadata: ["signal": "\(number == SIGTERM ? "SIGTERM" : "SIGINT")"])
                }
                let action = self.lock.withLock { number == SIGHUP ? self.hangup.arrived() : self.stop.arrived() }
                action?()
            }
            source.resume()
            sources.append(source)
        }
    }

    func onStop(_ action: @escaping @Sendable () -> Void) {
        if lock.withLock({ stop.set(action) }) { action() }
    }

    func onHangup(_ action: @escaping @Sendable () -> Void) {
        if lock.withLock({ hangup.set(action) }) { action() }
    }

    func cancel() {
        lock.withLock {
            for source in sources { source.cancel() }
            sources = []
        }
    }
}
