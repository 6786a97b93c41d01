import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Finds `city:` places through Open-Meteo's geocoding API (first match, narrowed by `country:`
/// and by text after a comma), logs the choice and the alternatives, and remembers it in
/// `<storage>/places.json` so a restart does not depend on the geocoder.
///
/// Look-ups run on a queue of their own, at most `lanes` at a time, each within
/// `refresh.timeout`: a geocoder that hangs holds up only the places waiting for it, never a
/// refresh of the others (weather, air quality or warnings). A feed that asks for a place still
/// being looked up goes on without it and is told when the look-up is over, found or not. A
/// failed look-up is not fatal: that place waits and retries with back-off (30 s or the refresh
/// interval, doubling, with jitter); one that could not reach the geocoder (DNS, connect, TLS) is
/// a `.network` failure, retried by the feeds' fast network retry as their own.
public final class Geocoder: @unchecked Sendable {
    /// A place's failed look-up: what was searched for, when to ask again, and what to say.
    struct Failure {
        var search: CitySearch
        var backoff: Backoff
        var error: WeatherFetchError
    }

    /// A look-up to run: the place's name, what to search for, how far apart its retries go,
    /// and the geocoder it was for (`generation`: a reload to another URL starts a new one).
    struct LookUp {
        var name: String
        var search: CitySearch
        var retryInterval: Double
        var generation: Int
    }

    /// Look-ups at once, at most: a few `city:` places are found together, and a geocoder that
    /// hangs costs a hundred of them `refresh.timeout` each over `lanes` threads, not one thread
    /// each.
    static let lanes = 4
    /// The shortest wait before a place whose look-up was answered with a failure is looked up
    /// again, whatever the refresh interval: a typo in `city:` stays wrong.
    static let shortestRetry: Double = 30
    /// How long a look-up that did not reach the geocoder is reported as failed before the
    /// next one may go: shorter than the feeds' first fast network retry, which decides when.
    static let networkFailureWait: Double = 1

    let lock = NIOLock()
    /// Set by `update` while look-ups run: locks of their own, so a look-up can read them.
    let base: NIOLockedValueBox<String>
    var baseURL: String { base.withLockedValue { $0 } }
    let limit: NIOLockedValueBox<Double>
    /// `refresh.timeout`: the longest a look-up may take, connecting included.
    var timeout: Double { limit.withLockedValue { $0 } }
    let client: CurlHTTPClient
    let recorder: UpstreamRecording
    let logger: Logger
    private let clock: ExporterClock
    private let stateFile: URL
    /// `places.json` holds a few hundred bytes a place: a bigger file is not one Cloudy wrote,
    /// and reading it whole could exhaust a pod's memory at every start.
    static let maxFileBytes = 16 << 20
    // Touched only under `lock`:
    var found: [String: Found]
    /// Places whose last look-up failed. A place searched for anew (a reload fixed its `city:`)
    /// does not wait for the old search.
    var failures: [String: Failure] = [:]
    /// Look-ups not begun yet, in the order asked for.
    var queued: [LookUp] = []
    /// Each place's look-up queued or running.
    var underWay: [String: LookUp] = [:]
    private var busyLanes = 0
    /// Bumped when the URL changes: what a look-up at the old one finds is not kept.
    var generation = 0
    /// The geocoder refused for its rate limit or sent `Retry-After`: no look-up goes to it
    /// before this (clock seconds), for any place; `heldFor` says why.
    var heldUntil = 0.0
    var heldFor = ""
    /// The places held back meanwhile, and the timer that has the feeds told of them when the
    /// wait is over.
    var heldBack: Set<String> = []
    var holdEnd: ScheduledTimer?
    private let holdQueue = DispatchQueue(label: "cloudy.geocoder.hold")
    /// The `city:` places configured, by name (nil until `update` says): a look-up for another
    /// place, or another search, is not run, and what one under way finds is not kept.
    var wanted: [String: CitySearch]?
    /// Whom to tell when a look-up is over: every caller (a feed) that asked, once each. The
    /// feeds ask for the same places, and one not waiting for that place asks nothing new.
    private var callers: [ObjectIdentifier: @Sendable (String) -> Void] = [:]
    private let working = DispatchGroup()
    /// Uniform in 0…1: spreads the retries of a failed look-up (a parameter so tests can pin it).
    private let jitter: @Sendable () -> Double

    public init(
        baseURL: String, timeout: Double = 10, storagePath: String, client: CurlHTTPClient,
        recorder: UpstreamRecording, logger: Logger, clock: ExporterClock = SystemClock(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        base = NIOLockedValueBox(baseURL)
        limit = NIOLockedValueBox(timeout)
        self.client = client
        self.recorder = recorder
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
        stateFile = URL(fileURLWithPath: storagePath).appendingPathComponent("places.json")
        found = Self.read(stateFile, logger: logger)
    }

    /// Each place with coordinates (as configured, from the state file, or found earlier), why
    /// it cannot be located now, or nil while its look-up is under way: the look-up is begun
    /// here if it is not, and `whenLookedUp` is called with the place's name (on the geocoder's
    /// queue, once per `caller`) when it, or any look-up, is over. `now` (Unix seconds) times the retries;
    /// `retryInterval` spaces the look-ups of a place that failed.
    public func locate(
        _ places: [Place], now: Double, retryInterval: Double, caller: ObjectIdentifier,
        whenLookedUp: @escaping @Sendable (String) -> Void
    ) -> [Result<Place, WeatherFetchError>?] {
        let locations = lock.withLock {
            callers[caller] = whenLookedUp
            return places.map { place -> Result<Place, WeatherFetchError>? in
                guard let search = place.city else { return .success(place) }
                if let known = found[place.name], known.search == search, known.isOnTheGlobe {
                    return .success(located(place, known))
                }
                if let failure = failures[place.name], failure.search == search, now < failure.backoff.notBefore {
                    return .failure(failure.error)
                }
                if underWay[place.name]?.search != search {
                    let lookUp = LookUp(
                        name: place.name, search: search, retryInterval: retryInterval, generation: generation)
                    underWay[place.name] = lookUp
                    queued.append(lookUp)
                }
                return nil
            }
        }
        startLanes()
        return locations
    }

    /// Returns once no look-up is queued or running (tests: what a look-up leads to is then
    /// queued on the feeds that wait for it).
    func waitForLookUps() {
        working.wait()
    }

    /// Puts idle lanes to work on the queued look-ups.
    func startLanes() {
        let idle = lock.withLock {
            let idle = min(queued.count, Self.lanes - busyLanes)
            busyLanes += idle
            return idle
        }
        for _ in 0..<idle {
            working.enter()
            // A serial queue of its own per lane: Dispatch gives each one a thread while it blocks,
            // whereas work sent to a concurrent queue on Linux shares as many threads as there
            // are CPUs (two here), so four look-ups there would run two at a time (`fetchEach`).
            DispatchQueue(label: "cloudy.geocoder.lane").async {
                self.work()
                self.working.leave()
            }
        }
    }

    /// One lane: looks up the queued places one after another until none is left.
    private func work() {
        while let next = lock.withLock({ () -> LookUp? in
            guard !queued.isEmpty else {
                busyLanes -= 1
                return nil
            }
            return queued.removeFirst()
        }) {
            let now = clock.now()
            let held = lock.withLock { now < heldUntil ? heldFor : nil }
            let outcome =
                held.map {
                    .failure(WeatherFetchError("not asked: the geocoder asked to wait (\($0))", wasAsked: false))
                }
                ?? lookUp(next.search, now: now) { [weak self] in
                    // A reload made it moot: it gives its lane up at once, not at refresh.timeout.
                    guard let self else { return true }
                    return self.lock.withLock { self.isMoot(next) }
                }
            let told = lock.withLock { settle(next, outcome) }
            for tell in told { tell(next.name) }
        }
    }

    /// Keeps what a look-up found or why it failed, and says whom to tell. A look-up the
    /// shutdown cut short leaves nothing: the next start asks again.
    private func settle(_ lookUp: LookUp, _ outcome: Result<Resolved, WeatherFetchError>)
        -> [@Sendable (String) -> Void]
    {
        let name = lookUp.name
        let search = lookUp.search
        guard !isMoot(lookUp) else { return [] }
        if underWay[name]?.search == search { underWay[name] = nil }
        guard !client.isCancelled else { return [] }
        switch outcome {
        case .success(let choice):
            logger.info("city resolved", metadata: choice.metadata)
            found[name] = choice.found
            failures[name] = nil
            save()
        case .failure(let error):
            let network = error.cause == .network
            // The geocoder was not reached: the feeds' fast network retry (2 s, 4 s, …) asks again,
            // as for a forecast that could not reach its API; the short wait only keeps the
            // feeds told of this failure from looking the place up again at once.
            let earlier = failures[name].flatMap {
                $0.search == search && $0.error.cause != .network && !network ? $0.backoff : nil
            }
            var backoff =
                earlier
                ?? Backoff(interval: network ? Self.networkFailureWait : max(Self.shortestRetry, lookUp.retryInterval))
            // The geocoder's limit (a 429, a `Retry-After`) is the client's, not the place's: the
            // others wait too, and its `Retry-After` is the wait, not the place's back-off.
            if !error.wasAsked {
                // Held back with the others: asked again when the geocoder's wait is over.
                backoff = Backoff(interval: backoff.interval)
                backoff.hold(until: heldUntil)
                hold(until: heldUntil, for: heldFor, place: name)
            } else if let retryAfter = error.retryAfter, retryAfter.isFinite {
                backoff = Backoff(interval: backoff.interval)
                backoff.hold(retryAfter: retryAfter, now: clock.now())
                hold(until: backoff.notBefore, for: error.message, place: name)
            } else {
                backoff.recordFailure(now: clock.now(), retryAfter: nil, jitter: jitter())
                if error.isRateLimit || error.retryAfter != nil {
                    hold(until: backoff.notBefore, for: error.message, place: name)
                }
            }
            // "geocoding: timed out" from the client, "HTTP 503" from an answer: said once.
            let reason = error.message.hasPrefix("geocoding: ") ? String(error.message.dropFirst(11)) : error.message
            failures[name] = Failure(
                search: search, backoff: backoff,
                error: WeatherFetchError(
                    "geocoding \(search.description): \(reason)", cause: network ? .network : .other))
            logger.warning(
                "city look-up failed",
                metadata: ["location": "\(name)", "city": "\(search.description)", "reason": "\(reason)"])
        }
        // A reload that searches for the place anew while this look-up ran waits for its own.
        guard underWay[name] == nil else { return [] }
        return Array(callers.values)
    }

    /// Holds every look-up back until `until` (the geocoder asked to wait), and has the feeds
    /// told of `place` then, so that they ask for it again at once rather than at their next
    /// refresh. Under `lock`.
    private func hold(until: Double, for reason: String, place: String) {
        heldBack.insert(place)
        if until > heldUntil {
            (heldUntil, heldFor) = (until, reason)
        } else if holdEnd != nil {
            return  // the timer armed for the wait in force tells of this place too
        }
        holdEnd?.cancel()
        holdEnd = clock.schedule(after: heldUntil - clock.now(), leeway: 0, on: holdQueue) { [weak self] in
            guard let self else { return }
            let (names, told) = self.lock.withLock {
                defer { (self.heldBack, self.holdEnd) = ([], nil) }
                return (self.heldBack, Array(self.callers.values))
            }
            for name in names.sorted() { for tell in told { tell(name) } }
        }
    }

    /// Asked of a geocoder a reload replaced (asked again there), or for a place no longer
    /// configured so: nothing to keep, nobody to tell. Under `lock`.
    private func isMoot(_ lookUp: LookUp) -> Bool {
        lookUp.generation != generation || wanted.map { $0[lookUp.name] != lookUp.search } ?? false
    }

    private func located(_ place: Place, _ choice: Found) -> Place {
        var place = place
        place.latitude = choice.latitude
        place.longitude = choice.longitude
        // The zone goes into every request for the place: one Cloudy cannot send and read (a
        // state file from before this rule) would fail them all. As the config's rule.
        place.timezone = place.timezone ?? Place.knownTimeZone(choice.timezone)
        place.isLocated = true
        return place
    }

    private func save() {
        Self.write(found, to: stateFile, logger: logger)
    }
}
