import Dispatch
import NIOConcurrencyHelpers

/// Where the bcrypt of a login not in the cache runs: its own serial queue, one check at a time
/// (as in the toolkit: a flood of wrong logins takes one core, not both), never Dispatch's global
/// pool, which `POST /-/reload` and the providers' fetches use. At most `maximumPending` checks
/// wait or run at once, across every connection; a login over that is answered 503 at once
/// instead of queueing behind seconds of bcrypt. The count outlives re-reads of the web config.
final class LoginCheckQueue: Sendable {
    /// 16 checks at the highest cost: 1.6 s of waiting at cost 10 (~0.1 s each here).
    static let defaultMaximumPending = 16
    private static let queue = DispatchQueue(label: "cloudy.login-checks", qos: .utility)
    /// Runs bcrypt on the queue; `HTTPRequestHandler` hands checks to it (tests to their own).
    static let offload: HTTPRequestHandler.Offload = { queue.async(execute: $0) }

    let maximumPending: Int
    private let pending = NIOLockedValueBox(0)

    init(maximumPending: Int = defaultMaximumPending) {
        self.maximumPending = maximumPending
    }

    /// Checks waiting or running.
    var count: Int { pending.withLockedValue { $0 } }

    /// Takes a place for one check; false when `maximumPending` are already taken.
    func enter() -> Bool {
        pending.withLockedValue { pending in
            guard pending < maximumPending else { return false }
            pending += 1
            return true
        }
    }

    /// Gives the place back once the check has run.
    func leave() {
        pending.withLockedValue { $0 -= 1 }
    }
}
