/// A feed's refresh under way: its places, what each got so far, and which are still to ask. A
/// refresh that fits the quota is asked in one step; one that does not is paced, a batch per
/// step, each step when the `QuotaAccount` has room; one the owner refuses for its quota waits
/// for the `QuietPeriod` and then asks the rest.
struct RefreshRun<Report: Sendable> {
    /// The places this run refreshes, as configured: every place, or those a fast network retry
    /// is for.
    private(set) var places: [Place]
    /// Each place as located (a `city:` place with the coordinates found), or why it is not.
    private(set) var located: [Result<Place, WeatherFetchError>]
    /// Each place's outcome so far; nil while it is still to ask.
    var outcomes: [Result<Report, WeatherFetchError>?]
    /// Indexes of located places still to ask, in config order.
    var pending: [Int]
    /// Clock seconds when the run started, or resumed after a quiet period.
    var started: Double
    /// Whether the run covers every configured place.
    let coversEveryPlace: Bool
    /// Seconds spent working (locating, fetching, rendering), without the waits between steps.
    var busySeconds = 0.0
    /// Whether the log has said that this run is paced.
    var toldPacing = false
    /// A quiet period holds the run; the step that resumes it counts as its start.
    var waitsForQuietPeriod = false
    /// The run is a fast retry after network failures before the places' first weather.
    var retriesNetwork = false
    /// The run asks places beside the schedule: their look-up just ended (`Feed.lookedUp`), or a
    /// reload added or moved them (`Feed.askBesideSchedule`).
    var besideSchedule = false
    /// The refresh armed when such a run began, kept when it ends (`Feed.keepArmed`): when it
    /// goes, the places it asks (nil: every place), and whether it is a fast network retry.
    var armedBefore: (deadline: Double, only: Set<String>?, network: Bool)?
    /// Outcomes are recorded in the store that no page shows yet.
    var hasUnrendered = false

    init(places: [Place], located: [Result<Place, WeatherFetchError>], started: Double, coversEveryPlace: Bool) {
        self.places = places
        self.located = located
        self.started = started
        self.coversEveryPlace = coversEveryPlace
        outcomes = located.map { location in
            if case .failure(let error) = location { return .failure(error) }
            return nil
        }
        pending = located.indices.filter { index in
            if case .success = located[index] { return true }
            return false
        }
    }

    /// Leaves out the places not named in `names` (a reload removed or moved them): they are no
    /// longer asked, recorded or counted in the refresh's outcome.
    mutating func keep(only names: Set<String>) {
        let kept = places.indices.filter { names.contains(places[$0].name) }
        guard kept.count < places.count else { return }
        var position: [Int: Int] = [:]
        for (new, old) in kept.enumerated() { position[old] = new }
        places = kept.map { places[$0] }
        located = kept.map { located[$0] }
        outcomes = kept.map { outcomes[$0] }
        pending = pending.compactMap { position[$0] }
    }

    /// The place at `index` as it is fetched, or nil when it could not be located.
    func location(at index: Int) -> Place? {
        try? located[index].get()
    }

    /// Indexes of the places that could be located, and so were (or are to be) fetched.
    var fetchedIndexes: [Int] {
        located.indices.filter { location(at: $0) != nil }
    }
}
