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
    fetchEach(
        places, maxInFlight: maxInFlight,
        refusal: { outcome in
            guard case .failure(let error) = outcome, error.isRateLimit else { return nil }
            return error
        },
        skipped: { _, refusal in
            .failure(refusal.notAsked("not asked: the provider asked to wait (\(refusal.message))"))
        },
        fetch)
}

/// Runs `fetch` for every item (a place, or a batch of places) on Dispatch's global queue with
/// at most `maxInFlight` at once, started in order, and returns the outcomes in the order of
/// `items`. Blocks the calling (refresh) thread until all are done. Once an outcome is a
/// `refusal` (the provider's rate limit or quota), items not started yet are not asked: their
/// outcome is `skipped`. With `maxInFlight` 1 the requests go one after another.
func fetchEach<Item: Sendable, Outcome: Sendable>(
    _ items: [Item], maxInFlight: Int,
    refusal: @escaping @Sendable (Outcome) -> WeatherFetchError?,
    skipped: (Item, WeatherFetchError) -> Outcome,
    _ fetch: @escaping @Sendable (Item) -> Outcome
) -> [Outcome] {
    let results = NIOLockedValueBox([Outcome?](repeating: nil, count: items.count))
    let slots = DispatchSemaphore(value: max(1, maxInFlight))
    let group = DispatchGroup()
    let refused = NIOLockedValueBox<WeatherFetchError?>(nil)
    for (index, item) in items.enumerated() {
        slots.wait()
        if let refusal = refused.withLockedValue({ $0 }) {
            slots.signal()
            let outcome = skipped(item, refusal)
            results.withLockedValue { $0[index] = outcome }
            continue
        }
        DispatchQueue.global().async(group: group) {
            defer { slots.signal() }
            let outcome = fetch(item)
            if let error = refusal(outcome) {
                refused.withLockedValue { $0 = $0 ?? error }
            }
            results.withLockedValue { $0[index] = outcome }
        }
    }
    group.wait()
    return results.withLockedValue { $0.map { $0! } }
}
