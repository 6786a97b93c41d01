/// What the exporter knows about one place after its latest refresh attempt.
public struct PlaceStatus: Sendable, Equatable {
    public var place: Place
    /// The last good weather; kept across failures until it is older than `refresh.stale_after`.
    public var snapshot: WeatherSnapshot?
    /// Unix seconds of the last successful refresh of this place.
    public var lastSuccess: Double?
    /// Unix seconds of the last refresh attempt, successful or not.
    public var lastAttempt: Double?
    /// Why the last attempt failed; nil after a success.
    public var lastError: String?
    /// The place as last fetched: for a `city:` place, with the coordinates and zone the
    /// geocoder found; nil while such a place has not been found yet.
    public var location: Place?
    /// The provider's quota refusal in force, for every place: no request goes out until it lifts.
    public var quietPeriod: QuietPeriod?
    /// While a paced refresh waits for room in the quota: when its next batch goes (unix seconds).
    public var pacedUntil: Double?
    /// Air quality, when the config asks for it; nil before its first ask.
    public var airQuality: AirQualityStatus?

    /// The sources beside the weather that keep one report per place, by the name the status page
    /// gives each, so that it says when one's last ask failed: a source that adds a field above
    /// lists it here too. Those not asked yet are left out. (The warnings keep several reports per
    /// place and say theirs apart: `StatusViewModel.problems(of:now:)`.)
    public var sourcesBeside: [(name: String, outcome: any SourceOutcome)] {
        let sources: [(String, (any SourceOutcome)?)] = [("Air quality", airQuality)]
        return sources.compactMap { name, outcome in outcome.map { (name, $0) } }
    }

    public init(
        place: Place, snapshot: WeatherSnapshot? = nil, lastSuccess: Double? = nil, lastAttempt: Double? = nil,
        lastError: String? = nil
    ) {
        self.place = place
        self.snapshot = snapshot
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastError = lastError
        self.location = place.isLocated ? place : nil
    }

    /// The last attempt succeeded.
    public var isUp: Bool { lastAttempt != nil && lastError == nil && lastSuccess != nil }

    /// The weather to show at `now`: nil once the last success is older than `staleAfter`.
    public func freshSnapshot(now: Double, staleAfter: Double) -> WeatherSnapshot? {
        guard let snapshot, let lastSuccess, now - lastSuccess <= staleAfter else { return nil }
        return snapshot
    }
}
