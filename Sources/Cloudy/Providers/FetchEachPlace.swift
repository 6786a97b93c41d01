import Dispatch
import NIOConcurrencyHelpers

/// For providers and warning sources that take one place per request: runs `fetch` for every
/// place on Dispatch's global queue with at most `maxInFlight` requests at once, and returns the
/// outcomes in the order of `places`. Blocks the calling (refresh) thread until all are done. After a refusal
/// for the provider's rate limit or quota (`isRateLimit`), places not started yet are not asked.
func fetchEachPlace<Report: Sendable>(
    _ places: [Place], maxInFlight: Int,
    _ fetch: @escaping @Sendable (Place) -> Result<Report, WeatherFetchError>
) -> [Result<Report, WeatherFetchError>] {
    let results = NIOLockedValueBox([Result<Report, WeatherFetchError>?](repeating: nil, count: places.count))
    let slots = DispatchSemaphore(value: max(1, maxInFlight))
    let group = DispatchGroup()
    let refused = NIOLockedValueBox<WeatherFetchError?>(nil)
    for (index, place) in places.enumerated() {
        slots.wait()
        if let refusal = refused.withLockedValue({ $0 }) {
            slots.signal()
            let skipped = refusal.notAsked("not asked: the provider asked to wait (\(refusal.message))")
            results.withLockedValue { $0[index] = .failure(skipped) }
            continue
        }
        DispatchQueue.global().async(group: group) {
            defer { slots.signal() }
            let outcome = fetch(place)
            if case .failure(let error) = outcome, error.isRateLimit {
                refused.withLockedValue { $0 = $0 ?? error }
            }
            results.withLockedValue { $0[index] = outcome }
        }
    }
    group.wait()
    return results.withLockedValue { $0.map { $0 ?? .failure(WeatherFetchError("no answer")) } }
}
