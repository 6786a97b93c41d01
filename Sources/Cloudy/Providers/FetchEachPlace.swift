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

/// `fetchEachPlace` for a source that spaces its requests per place (OpenWeatherMap's ten
/// minutes, MET's kept answers): `fetch` gets every place with the moment the batch started on
/// `clock`, not its own turn, so a place whose turn came late behind slow answers in one batch
/// is not kept from the next one, due that spacing later, for a whole interval more.
func fetchEachPlace<Report: Sendable>(
    _ places: [Place], maxInFlight: Int, from clock: any ExporterClock,
    _ fetch: @escaping @Sendable (Place, _ started: Double) -> Result<Report, WeatherFetchError>
) -> [Result<Report, WeatherFetchError>] {
    let started = clock.now()
    return fetchEachPlace(places, maxInFlight: maxInFlight) { fetch($0, started) }
}

/// Runs `fetch` for every item (a place, or a batch of places) with at most `maxInFlight` at
/// once, started in order, and returns the outcomes in the order of `items`. Blocks the calling
/// (refresh) thread until all are done. Once an outcome is a `refusal` (the provider's rate
/// limit or quota), items not started yet are not asked: their outcome is `skipped`. With
/// `maxInFlight` 1 the requests go one after another.
///
/// Each of the `maxInFlight` lanes is a serial queue of its own: Dispatch gives each such queue
/// a thread while it blocks, whereas blocks sent to the global queue on Linux share as many
/// threads as there are CPUs (two here), so four requests there would run two at a time.
func fetchEach<Item: Sendable, Outcome: Sendable>(
    _ items: [Item], maxInFlight: Int,
    refusal: @escaping @Sendable (Outcome) -> WeatherFetchError?,
    skipped: @escaping @Sendable (Item, WeatherFetchError) -> Outcome,
    _ fetch: @escaping @Sendable (Item) -> Outcome
) -> [Outcome] {
    let state = NIOLockedValueBox(
        (next: 0, refused: WeatherFetchError?.none, results: [Outcome?](repeating: nil, count: items.count)))
    let group = DispatchGroup()
    for lane in 0..<min(max(1, maxInFlight), items.count) {
        DispatchQueue(label: "cloudy.fetch.\(lane)").async(group: group) {
            while true {
                let (index, earlier) = state.withLockedValue { state in
                    defer { state.next += 1 }
                    return (state.next, state.refused)
                }
                guard index < items.count else { return }
                let outcome = earlier.map { skipped(items[index], $0) } ?? fetch(items[index])
                let refused = earlier == nil ? refusal(outcome) : nil
                state.withLockedValue { state in
                    if let refused, state.refused == nil { state.refused = refused }
                    state.results[index] = outcome
                }
            }
        }
    }
    group.wait()
    return state.withLockedValue { $0.results.map { $0! } }
}
