import Logging

/// One upstream that a `Feed` asks on a schedule: the request and the decoder, nothing else.
/// The feed gives it the timer, back-off with jitter and `Retry-After`, pacing and quiet
/// periods through its `QuotaAccount`, the quick retry while the network is not up, the stale
/// re-render, and hands what comes back to its `FeedRecorder`.
///
/// A new source writes this (its request, batching and decoding), what it records and shows (a
/// `FeedRecorder`, its status and families), its config, and where the application builds its
/// feed: docs/architecture.md, "Adding an upstream". The weather providers are the first
/// sources (`WeatherProvider` refines this protocol).
public protocol FeedSource<Report>: Sendable {
    /// What one place gets from the upstream (`WeatherSnapshot` for the weather).
    associatedtype Report: Sendable

    /// Names the upstream in the log and, as a rule, in the `provider` label of
    /// `cloudy_exporter_upstream_*` (`open-meteo`, …). Sources that spend one quota count their
    /// calls under the name of the quota's owner, so the page shows the sum; MET Norway's
    /// warnings count their requests apart from its forecast (`met-norway-metalerts`).
    var providerLabel: String { get }

    /// Asks the upstream for every place, in as few requests as it allows and never more at once
    /// than it tolerates. Blocks the feed's serial queue (never an event loop); returns one
    /// outcome per place, in the order of `places`. A failure says why (`WeatherFetchError`):
    /// its `cause` (network, quota with the window named, bad request, other), `retryAfter`,
    /// `wasAsked` (false: the place cost nothing) and `calls` (what the upstream counted when it
    /// is not the place's full weight); the feed acts on them.
    func fetch(_ places: [Place], logger: Logger) -> [Result<Report, WeatherFetchError>]

    /// Whether the upstream is asked for `place` once it is located (a warning service only for
    /// places in its area): a place it is not is left out of the refresh, with no request, no
    /// outcome and no part in the back-off. Every place by default.
    func asks(_ place: Place) -> Bool
}

extension FeedSource {
    public func asks(_ place: Place) -> Bool { true }
}

/// One place's outcome in a refresh: the place as configured, where it was fetched (with the
/// coordinates a geocoder found; nil when it could not be located), and what came back.
public typealias FeedOutcome<Report> = (place: Place, location: Place?, outcome: Result<Report, WeatherFetchError>)

/// Where a feed's outcomes go: the store of what the pages show. Called on the feed's queue
/// after every batch, so a paced refresh shows each batch as it comes in.
public protocol FeedRecorder<Report>: Sendable {
    associatedtype Report: Sendable

    /// Records a batch's outcomes (failures too: the page says why a place has no value).
    func record(_ outcomes: [FeedOutcome<Report>], at now: Double)
    /// Puts the feed's places under the quota's quiet period, or (nil) lifts it.
    func setQuietPeriod(_ quietPeriod: QuietPeriod?)
    /// Renders the pages from what is recorded (after each batch, and when a value goes stale).
    func render(now: Double)
    /// The earliest moment a recorded value goes stale, if any: the feed re-renders then.
    func nextStaleDeadline() -> Double?
    /// The working time of a whole refresh, when its last batch is in.
    func recordRefresh(seconds: Double)
    /// When a paced refresh's next batch goes while it waits for room in the quota, or nil.
    func setPacedUntil(_ until: Double?)
}

extension FeedRecorder {
    /// Only the weather's places say that they wait for room (`/readyz`).
    public func setPacedUntil(_ until: Double?) {}
    /// Only the weather's refresh is timed (`cloudy_exporter_refresh_duration_seconds`).
    public func recordRefresh(seconds: Double) {}
}

/// How a feed spends: which places, how often, and what one place costs its quota.
public struct FeedSchedule: Sendable, Equatable {
    /// The places to ask, as configured (a `city:` place is located before it is asked).
    public var places: [Place]
    /// Seconds between refreshes (`refresh.interval` for the weather, `warnings.interval`, …).
    public var interval: Double
    /// What one place costs per refresh as the quota's owner counts it (`CallCost`); pacing
    /// uses it, 0 when the quota counts nothing.
    public var callsPerPlace: Double

    public init(places: [Place], interval: Double, callsPerPlace: Double) {
        self.places = places
        self.interval = interval
        self.callsPerPlace = callsPerPlace
    }
}

/// Finds the coordinates of `city:` places before a feed asks for them (the `Geocoder`).
/// Several feeds may share one: it is safe from any queue, and never makes a feed wait.
public protocol PlaceLocator: Sendable {
    /// Each place with coordinates, why it cannot be located yet, or nil while it is being
    /// looked up: `whenLookedUp` is called with the name of each place whose look-up is over
    /// (once per `caller`, on any queue); a place the caller does not wait for it may ignore. `retryInterval` spaces the look-ups of a place that failed.
    func locate(
        _ places: [Place], now: Double, retryInterval: Double, caller: ObjectIdentifier,
        whenLookedUp: @escaping @Sendable (String) -> Void
    ) -> [Result<Place, WeatherFetchError>?]
}

extension Geocoder: PlaceLocator {}

/// What the application starts, stops and reloads for every upstream it asks (`RefreshService`).
public protocol ScheduledFeed: AnyObject, Sendable {
    /// Resumes its client and arms the first refresh at once.
    func start()
    /// Cancels its timers and aborts a refresh in flight, waiting for it at most `timeout` seconds.
    func stop(timeout: Double)
    /// Applies a config accepted by a reload (`previous` was in force until now).
    func apply(_ config: Config, previous: Config)
    /// The HTTP client it asks through (`Feeds.apply` gives it a reload's `User-Agent`).
    var client: CurlHTTPClient { get }
}
