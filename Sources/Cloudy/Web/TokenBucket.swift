import NIOConcurrencyHelpers

/// `rate_limit`: a token bucket shared by every connection, as the toolkit's limiter is. It
/// holds at most `burst` tokens and gains one every `interval` seconds; a request takes one, or
/// is answered 429. Time comes from the `ExporterClock`, so tests advance it.
final class TokenBucket: Sendable {
    let limit: WebConfig.RateLimit
    private let clock: ExporterClock
    private let state: NIOLockedValueBox<(tokens: Double, at: Double)>

    init(_ limit: WebConfig.RateLimit, clock: ExporterClock) {
        self.limit = limit
        self.clock = clock
        state = NIOLockedValueBox((Double(limit.burst), clock.now()))
    }

    /// Takes a token; false when there is none.
    func take() -> Bool {
        let now = clock.now()
        return state.withLockedValue { state in
            let gained = max(0, now - state.at) / limit.interval
            state.tokens = min(Double(limit.burst), state.tokens + gained)
            state.at = now
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }
}
