import Dispatch
import Foundation
import Logging

/// SIGTERM/SIGINT (stop) and SIGHUP (reload) through Dispatch signal sources, installed first
/// thing at start-up. A signal that arrives before its action is set is remembered and acted
/// on as soon as it is (a stop during start-up stops right after start-up; a reload asked for
/// after the config was read reads it again).
final class ProcessSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [DispatchSourceSignal] = []
    private var stopAction: (@Sendable () -> Void)?
    private var hangupAction: (@Sendable () -> Void)?
    private var stopPending = false
    private var hangupPending = false

    init(logger: Logger) {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                if number == SIGHUP {
                    let action: (@Sendable () -> Void)? = self.lock.withLock {
                        self.hangupPending = self.hangupAction == nil
                        return self.hangupAction
                    }
                    action?()
                    return
                }
                logger.info("stopping", metadata: ["signal": "\(number == SIGTERM ? "SIGTERM" : "SIGINT")"])
                let action: (@Sendable () -> Void)? = self.lock.withLock {
                    self.stopPending = self.stopAction == nil
                    return self.stopAction
                }
                action?()
            }
            source.resume()
            sources.append(source)
        }
    }

    func onStop(_ action: @escaping @Sendable () -> Void) {
        let pending = lock.withLock {
            stopAction = action
            return stopPending
        }
        if pending { action() }
    }

    func onHangup(_ action: @escaping @Sendable () -> Void) {
        let pending = lock.withLock {
            hangupAction = action
            defer { hangupPending = false }
            return hangupPending
        }
        if pending { action() }
    }

    func cancel() {
        lock.withLock {
            for source in sources { source.cancel() }
            sources = []
        }
    }
}
