import Dispatch
import NIOConcurrencyHelpers

/// For providers that take one place per request: runs `fetch` for every place on Dispatch's
/// global queue with at most `maxInFlight` requests at once, and returns the outcomes in the
/// order of `places`. Blocks the calling (refresh) thread until all are done.
func fetchEachPlace(
    _ places: [Place], maxInFlight: Int,
    _ fetch: @escaping @Sendable (Place) -> Result<WeatherSnapshot, WeatherFetchError>
) -> [Result<WeatherSnapshot, WeatherFetchError>] {
    let results = NIOLockedValueBox([Result<WeatherSnapshot, WeatherFetchError>?](repeating: nil, count: places.count))
    let slots = DispatchSemaphore(value: max(1, maxInFlight))
    let group = DispatchGroup()
    for (index, place) in places.enumerated() {
        slots.wait()
        DispatchQueue.global().async(group: group) {
            defer { slots.signal() }
            let outcome = fetch(place)
            results.withLockedValue { $0[index] = outcome }
        }
    }
    group.wait()
    return results.withLockedValue { $0.map { $0 ?? .failure(WeatherFetchError("no answer")) } }
}
