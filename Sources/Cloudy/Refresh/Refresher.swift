import CMalloc
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Drives refreshes from one-shot timers on a serial queue: the first at start-up, then every
/// `refresh.interval` — later while the provider fails (`Backoff`). The timer is armed again
/// only when a refresh has finished, so a slow refresh never overlaps the next; scrapes never
/// wait on it. A second timer re-renders the pages when a place's last good weather reaches
/// `stale_after`, so stale series vanish on time even while refreshes wait. Time comes from an
/// `ExporterClock` (Dispatch and the wall clock in production; a manual clock in tests).
///
/// Within the provider's quota (`CallBudget`): a refresh that costs more than a window allows
/// is paced, its batches spread by the `CallLedger` so that no window goes over 90 % of its
/// limit (`RefreshPlan.margin`), and the pages are rendered after each batch. A quota 429
/// starts a `QuietPeriod`: nothing goes to the provider until it lifts, then the refresh asks
/// the places still waiting. A first refresh that fails because the network is not there yet
/// is retried after 2 s, 4 s, 8 s, … up to the interval, for the places that never had weather.
public final class Refresher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "cloudy.refresh")
    private let store: WeatherStore
    private let client: CurlHTTPClient
    private let logger: Logger
    private let clock: ExporterClock
    /// Uniform in 0…1: spreads the back-off of replicas that failed together.
    private let jitter: @Sendable () -> Double
    /// The budget a config puts this process under (`CallBudget.of`).
    private let callBudget: @Sendable (Config) -> CallBudget
    private let idle = DispatchGroup()
    private let geocoder: Geocoder
    // Touched only on `queue`:
    private var timer: ScheduledTimer?
    /// When `timer` fires (clock seconds).
    private var timerDeadline: Double?
    private var staleTimer: ScheduledTimer?
    private var running = false
    /// When the last refresh of every place started (or resumed after a quiet period).
    private var lastStarted = 0.0
    private var provider: WeatherProvider
    private(set) var backoff: Backoff
    private var budget: CallBudget
    /// What pacing keeps each window within: `RefreshPlan.margin` of its limit, as the plan
    /// counts a paced window (the rest stays free for what the plan cannot see).
    private var pacingQuota: Quota
    /// What this process spent on the provider recently.
    private(set) var ledger = CallLedger()
    /// The refresh under way while it waits between paced batches or for a quiet period.
    private var run: RefreshRun?
    /// The provider's quota refusal in force.
    private(set) var quietPeriod: QuietPeriod?
    /// Fast retries so far for places whose first fetch failed for the network.
    private var networkRetries = 0
    /// The timer armed is such a fast retry.
    private var armedForNetwork = false
    /// 400 answers already logged (by message): a config problem is said once.
    private var loggedBadRequests: Set<String> = []
    /// Where the ledger and a quiet period survive a restart (`QuotaState`).
    private let quotaFile: URL
    /// The provider and URL the ledger and quiet period are for.
    private var quotaOwner: (name: ProviderName, url: String)

    /// The first retry after a network failure before a place's first success; each next
    /// one waits twice as long, until the wait would reach the interval.
    static let firstNetworkRetry = 2.0
    /// How long after a past batch leaves a window the next paced batch goes out.
    static let pacingMargin = 1.0

    public init(
        store: WeatherStore, client: CurlHTTPClient, storagePath: String, logger: Logger,
        clock: ExporterClock = SystemClock(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        callBudget: @escaping @Sendable (Config) -> CallBudget = { CallBudget.of($0) }
    ) {
        self.store = store
        self.client = client
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
        self.callBudget = callBudget
        let config = store.config
        geocoder = Geocoder(
            baseURL: config.geocodingURL, storagePath: storagePath, client: client,
            recorder: store.telemetry, logger: logger, jitter: jitter)
        provider = ProviderFactory.make(config, client: client, recorder: store.telemetry, logger: logger, clock: clock)
        backoff = Backoff(interval: config.refresh.interval)
        budget = callBudget(config)
        pacingQuota = Self.pacingQuota(budget)
        quotaFile = QuotaState.file(in: storagePath)
        quotaOwner = (config.provider.name, config.provider.url)
        // What the provider counted before a restart still counts, and a refusal still holds.
        if let kept = QuotaState.load(
            from: quotaFile, provider: config.provider.name, url: config.provider.url, logger: logger)
        {
            ledger = kept.ledger
            let now = clock.now()
            if let quiet = kept.quietPeriod, quiet.until > now {
                quietPeriod = quiet
                backoff.hold(until: quiet.until)
                store.setQuietPeriod(quiet)
            }
            logger.info(
                "calls spent before the restart still count",
                metadata: [
                    "provider": "\(config.provider.name.rawValue)",
                    "calls_last_day": "\(SampleValue.format(ledger.spent(inLast: 86400, at: now)))",
                    "quiet_until": "\(quietPeriod.map { QuietPeriod.utcTime($0.until) } ?? "none")",
                ])
        }
    }

    /// Keeps the ledger and the quiet period in `quotaFile` for the next start.
    private func saveQuotaState() {
        QuotaState(provider: quotaOwner.name, url: quotaOwner.url, ledger: ledger, quietPeriod: quietPeriod)
            .save(to: quotaFile, logger: logger)
    }

    public func start() {
        queue.sync {
            self.client.resume()
            self.running = true
            self.arm(in: 0)
        }
    }

    /// Cancels the timers and aborts a refresh in flight, waiting for it at most `timeout` seconds
    /// (shutdown must not wait on a hung upstream).
    public func stop(timeout: Double = 0.5) {
        client.cancelAll()
        queue.async {
            self.running = false
            self.run = nil
            self.timer?.cancel()
            self.timer = nil
            self.staleTimer?.cancel()
            self.staleTimer = nil
        }
        _ = idle.wait(timeout: .now() + timeout)
    }

    /// Applies a new config (after a reload): new provider settings and interval. When the
    /// reload added places or changed what is fetched, a refresh runs at once (backoff,
    /// Retry-After and a quiet period permitting) so the new places appear without waiting a
    /// whole interval; a paced refresh under way then asks its places still waiting and the new
    /// ones, not its first places again. A reload that changed neither keeps the schedule (a
    /// paced refresh goes on, an armed fast network retry stays), so reloading is no way around
    /// fair use.
    public func apply(_ config: Config, previous: Config) {
        queue.async {
            let fetchSettingsChanged =
                config.provider != previous.provider || config.forecast != previous.forecast
                || config.refresh.timeout != previous.refresh.timeout
            // A provider that keeps its settings keeps its caches (MET's Expires, OWM's call budget).
            if fetchSettingsChanged {
                self.provider = ProviderFactory.make(
                    config, client: self.client, recorder: self.store.telemetry,
                    logger: self.logger, clock: self.clock)
            }
            self.budget = self.callBudget(config)
            self.pacingQuota = Self.pacingQuota(self.budget)
            self.loggedBadRequests = []
            self.backoff.interval = config.refresh.interval
            // Calls spent, a quiet period and the back-off belong to the provider that was asked:
            // they stay while it stays the same; another one starts afresh and is asked at once.
            if config.provider.name != previous.provider.name || config.provider.url != previous.provider.url {
                self.ledger = CallLedger()
                self.quietPeriod = nil
                self.store.setQuietPeriod(nil)
                self.backoff = Backoff(interval: config.refresh.interval)
                self.quotaOwner = (config.provider.name, config.provider.url)
                self.saveQuotaState()
            }
            self.geocoder.baseURL = config.geocodingURL
            let known = Set(previous.places.map(\.name))
            let fetchChanged =
                fetchSettingsChanged
                || config.places.contains { !known.contains($0.name) || !previous.places.contains($0) }
            guard self.running else { return }
            let now = self.clock.now()
            if fetchChanged {
                // A refresh under way (paced, or waiting for a quiet period) with the same fetch
                // settings goes on with its places still waiting, plus the added or changed ones,
                // rather than asking its first places again.
                var only: Set<String>?
                if !fetchSettingsChanged, let run = self.run {
                    let unchanged = Set(config.places.filter { previous.places.contains($0) }.map(\.name))
                    let waiting = run.pending.map { run.places[$0].name }.filter { unchanged.contains($0) }
                    let new = config.places.filter { !previous.places.contains($0) }.map(\.name)
                    only = Set(waiting + new)
                }
                self.arm(in: self.backoff.notBefore - now, only: only)
            } else if config.refresh.interval != previous.refresh.interval, self.run == nil, !self.armedForNetwork {
                // A fast retry armed stays: the network is still awaited.
                self.arm(in: self.backoff.nextRefresh(after: self.lastStarted) - now)
            }
        }
    }

    /// Returns once the work queued so far (a reload's `apply`, a refresh) has run.
    func waitForQueuedWork() {
        queue.sync {}
    }

    /// When the next refresh (or the next batch of a paced one) is due (clock seconds), or nil
    /// when stopped.
    var nextRefresh: Double? {
        queue.sync { running ? timerDeadline : nil }
    }

    /// The calls spent in the last `seconds`, as the ledger has them.
    func callsSpent(inLast seconds: Double) -> Double {
        queue.sync { ledger.spent(inLast: seconds, at: clock.now()) }
    }

    /// Arms the one-shot refresh timer `delay` seconds from now (at once when ≤ 0), for every
    /// place or only those named; a refresh under way is given up.
    private func arm(in delay: Double, only names: Set<String>? = nil, retryingNetwork: Bool = false) {
        run = nil
        armedForNetwork = retryingNetwork
        setTimer(in: delay) { [weak self] in
            guard let self, self.running else { return }
            self.begin(only: names, retryingNetwork: retryingNetwork)
        }
    }

    /// Arms the timer for the next step of the refresh under way.
    private func armStep(in delay: Double) {
        setTimer(in: delay) { [weak self] in
            guard let self, self.running else { return }
            self.step()
        }
    }

    private func setTimer(in delay: Double, _ action: @escaping @Sendable () -> Void) {
        timer?.cancel()
        timerDeadline = clock.now() + max(0, delay)
        timer = clock.schedule(after: delay, leeway: min(1, backoff.interval * 0.05), on: queue, action)
    }

    /// Arms the re-render for the moment the next place's weather goes stale.
    private func armStaleTimer() {
        staleTimer?.cancel()
        staleTimer = nil
        guard running, let deadline = store.nextStaleDeadline() else { return }
        staleTimer = clock.schedule(after: deadline - clock.now() + 0.01, leeway: 0, on: queue) { [weak self] in
            guard let self, self.running else { return }
            self.store.render(now: self.clock.now())
            self.armStaleTimer()
        }
    }

    /// Starts a refresh of every place, or of the places named: locates them, then asks.
    private func begin(only names: Set<String>?, retryingNetwork: Bool) {
        idle.enter()
        defer { idle.leave() }
        let started = clock.now()
        let all = store.config.places
        let places = names.map { wanted in all.filter { wanted.contains($0.name) } } ?? all
        let coversEveryPlace = places.count == all.count
        if coversEveryPlace { lastStarted = started }
        guard !places.isEmpty else {
            arm(in: backoff.nextRefresh(after: lastStarted) - started)
            return
        }
        let began = DispatchTime.now()
        // `city:` places are located first; those not found yet wait while the others are fetched.
        let located = geocoder.locate(places, now: started, retryInterval: backoff.interval)
        var run = RefreshRun(places: places, located: located, started: started, coversEveryPlace: coversEveryPlace)
        run.retriesNetwork = retryingNetwork
        let unlocated = located.indices.filter { run.location(at: $0) == nil }
        if !unlocated.isEmpty {
            store.record(
                unlocated.compactMap { index in
                    run.outcomes[index].map { (place: places[index], location: nil, outcome: $0) }
                }, at: clock.now())
            logFailures(of: unlocated, in: run)
            run.hasUnrendered = true
        }
        run.busySeconds += Self.seconds(since: began)
        self.run = run
        step()
    }

    /// Asks the next batch of the refresh under way: as many places as the quota has room for
    /// now (all of them without a quota), records and renders what came back, then arms the
    /// next step, the quiet period's end, or the next refresh.
    private func step() {
        guard running, var run else { return }
        idle.enter()
        defer { idle.leave() }
        var now = clock.now()
        if let quiet = quietPeriod {
            guard now >= quiet.until else {
                // A run that begins in a quiet period (kept over a restart, or after a reload)
                // waits for it like one the provider refused: its places say so meanwhile, and
                // it counts as started when the period lifts.
                if !run.waitsForQuietPeriod {
                    run.waitsForQuietPeriod = true
                    let waiting = WeatherFetchError(quiet.description, wasAsked: false)
                    store.record(
                        run.pending.map {
                            (place: run.places[$0], location: run.location(at: $0), outcome: .failure(waiting))
                        }, at: now)
                    store.render(now: now)
                    self.run = run
                }
                armStep(in: quiet.until - now)
                return
            }
            quietPeriod = nil
            store.setQuietPeriod(nil)
            saveQuotaState()
            logger.info(
                "quiet period over; asking the provider again",
                metadata: ["provider": "\(provider.name.rawValue)", "places_waiting": "\(run.pending.count)"])
        }
        if run.waitsForQuietPeriod {
            run.waitsForQuietPeriod = false
            run.started = now
            if run.coversEveryPlace { lastStarted = now }
        }
        guard !run.pending.isEmpty else {
            // Nothing to fetch (no place could be located): the located failures go on the page.
            store.telemetry.recordRefresh(seconds: run.busySeconds)
            store.render(now: now)
            armStaleTimer()
            return finish(run)
        }
        let affordable = ledger.affordablePlaces(callsPerPlace: budget.callsPerPlace, quota: pacingQuota, at: now)
        guard affordable > 0 else {
            if run.hasUnrendered {
                run.hasUnrendered = false
                store.render(now: now)
            }
            return armNextBatch(of: run, now: now)
        }
        let began = DispatchTime.now()
        let taken = Array(run.pending.prefix(affordable))
        run.pending.removeFirst(taken.count)
        let results = provider.fetch(taken.compactMap { run.location(at: $0) }, logger: logger)
        // Stopped meanwhile (`stop` cancels the requests before the queue hears of it): what came
        // back is the shutdown, not the provider's answer; nothing is recorded, shown or backed off.
        guard !client.isCancelled else {
            self.run = nil
            return
        }
        now = clock.now()
        // Stamped when the answers are in, so the next batch leaves at least a window after
        // the provider counted this one. Places not asked, or whose request never reached the
        // API, cost nothing; a request the provider answered with an error costs what it
        // counts for it (`WeatherFetchError.calls`), as `cloudy_exporter_upstream_calls_total` has it.
        let spent = results.reduce(0.0) { sum, outcome in
            guard case .failure(let error) = outcome else { return sum + budget.callsPerPlace }
            guard error.wasAsked, error.cause != .network else { return sum }
            return sum + (error.calls ?? budget.callsPerPlace)
        }
        ledger.record(spent, at: now, keeping: budget.quota.limits.keys.map(\.seconds).max() ?? 0)

        var refusal: WeatherFetchError?
        var refused: [Int] = []
        var answered: [Int] = []
        for (offset, index) in taken.enumerated() {
            let outcome = offset < results.count ? results[offset] : .failure(WeatherFetchError("no answer"))
            if case .failure(let error) = outcome, case .quota = error.cause {
                if refusal == nil || (refusal?.wasAsked == false && error.wasAsked) { refusal = error }
                refused.append(index)
            } else {
                run.outcomes[index] = outcome
                answered.append(index)
            }
        }
        store.record(
            answered.compactMap { index in
                run.outcomes[index].map { (place: run.places[index], location: run.location(at: index), outcome: $0) }
            }, at: now)
        logFailures(of: answered, in: run)
        var quiet: QuietPeriod?
        if let refusal {
            run.pending = refused + run.pending
            let period = beginQuietPeriod(after: refusal, now: now, placesWaiting: run.pending.count)
            let waiting = WeatherFetchError(period.description, cause: refusal.cause, wasAsked: false)
            store.record(
                run.pending.map { (place: run.places[$0], location: run.location(at: $0), outcome: .failure(waiting)) },
                at: now)
            store.setQuietPeriod(period)
            run.waitsForQuietPeriod = true
            quiet = period
        }
        if (spent > 0 && !budget.quota.limits.isEmpty) || quiet != nil { saveQuotaState() }
        run.busySeconds += Self.seconds(since: began)
        run.hasUnrendered = false
        // The refresh's duration is on the page rendered when its last batch is in.
        if quiet == nil, run.pending.isEmpty { store.telemetry.recordRefresh(seconds: run.busySeconds) }
        store.render(now: now)
        armStaleTimer()
        self.run = run
        if let quiet {
            armStep(in: quiet.until - now)
        } else if run.pending.isEmpty {
            finish(run)
        } else {
            armNextBatch(of: run, now: now)
        }
    }

    /// Arms the next step of `run` for when the ledger has room for a place (at once when it
    /// has now); the first wait of a run is logged.
    private func armNextBatch(of run: RefreshRun, now: Double) {
        var run = run
        let room = ledger.nextRoom(callsPerPlace: budget.callsPerPlace, quota: pacingQuota, after: now)
        let wait = room > now ? room + Self.pacingMargin - now : 0
        if wait > 0, !run.toldPacing {
            run.toldPacing = true
            logger.info(
                "refresh paced to stay within the provider's quota",
                metadata: [
                    "provider": "\(provider.name.rawValue)", "places_waiting": "\(run.pending.count)",
                    "next_batch_in_seconds": "\(SampleValue.format(wait.rounded()))",
                ])
        }
        self.run = run
        armStep(in: wait)
    }

    /// The quiet period a quota refusal asks for, started: Open-Meteo's window named in the
    /// answer until it starts afresh (`Retry-After` when later); OpenWeatherMap's block, which
    /// names none, with the back-off's doubling waits. Logged here, once.
    private func beginQuietPeriod(after refusal: WeatherFetchError, now: Double, placesWaiting: Int) -> QuietPeriod {
        let until: Double
        if case .quota(let window?) = refusal.cause {
            let asked = refusal.retryAfter.map { now + min($0, 31 * 86400) } ?? now
            until = max(QuietPeriod.lift(after: window, now: now), asked)
            backoff.hold(until: until)
        } else {
            backoff.recordFailure(now: now, retryAfter: refusal.retryAfter, jitter: jitter())
            until = backoff.notBefore
        }
        let period = QuietPeriod(provider: provider.name, reason: refusal.message, until: until)
        quietPeriod = period
        logger.warning(
            "the provider refuses requests for its quota; none until it lifts",
            metadata: [
                "provider": "\(provider.name.rawValue)", "reason": "\(refusal.message)",
                "until": "\(QuietPeriod.utcTime(until))", "places_waiting": "\(placesWaiting)",
            ])
        return period
    }

    /// Ends the refresh (its duration is already on the page): back-off, the log line, and the
    /// next refresh armed — soon when places that never had weather failed for the network.
    private func finish(_ run: RefreshRun) {
        self.run = nil
        let now = clock.now()
        // Decoding and rendering free megabytes at once; hand them back to the system so the
        // resident size reflects what the exporter keeps, not its peak.
        _ = malloc_trim(0)
        let outcomes = run.outcomes.map { $0 ?? .failure(WeatherFetchError("no answer")) }
        let failed = outcomes.filter { if case .failure = $0 { return true } else { return false } }.count
        // Only a refresh that failed for every place it fetched says the provider is in trouble.
        let fetched = run.fetchedIndexes
        let providerFailures = fetched.compactMap { index -> WeatherFetchError? in
            guard case .failure(let error) = outcomes[index] else { return nil }
            return error
        }
        if !providerFailures.contains(where: { $0.cause == .badRequest }) { loggedBadRequests = [] }
        let neverFetched = Set(store.statuses.filter { $0.lastSuccess == nil }.map(\.place.name))
        // Places not located because the geocoder could not be reached wait for the network too.
        let networkWaiting = run.places.indices.filter { index in
            guard case .failure(let error) = outcomes[index], error.cause == .network else { return false }
            return neverFetched.contains(run.places[index].name)
        }.map { run.places[$0].name }
        let fastRetry = Self.firstNetworkRetry * Double(1 << min(networkRetries, 30))
        let regular = backoff.nextRefresh(after: lastStarted)
        if !networkWaiting.isEmpty, fastRetry < backoff.interval, now + fastRetry < regular {
            networkRetries += 1
            logger.info(
                "no connection to the provider yet; retrying soon",
                metadata: [
                    "provider": "\(provider.name.rawValue)", "places": "\(networkWaiting.count)",
                    "next_attempt_in_seconds": "\(SampleValue.format(fastRetry))",
                ])
            let everyPlace = networkWaiting.count == store.config.places.count
            arm(in: fastRetry, only: everyPlace ? nil : Set(networkWaiting), retryingNetwork: true)
        } else {
            if networkWaiting.isEmpty { networkRetries = 0 }
            if !fetched.isEmpty, providerFailures.count == fetched.count {
                let retryAfter = providerFailures.compactMap(\.retryAfter).max()
                backoff.recordFailure(now: now, retryAfter: retryAfter, jitter: jitter())
                logger.info(
                    "provider failing; backing off",
                    metadata: [
                        "consecutive_failures": "\(backoff.failures)",
                        "next_attempt_in_seconds":
                            "\(SampleValue.format((backoff.nextRefresh(after: now) - now).rounded()))",
                    ])
            } else {
                backoff.recordSuccess()
            }
            arm(in: backoff.nextRefresh(after: lastStarted) - now)
        }
        logger.info(
            "refresh finished",
            metadata: [
                "places_ok": "\(run.places.count - failed)", "places_failed": "\(failed)",
                "duration_seconds": "\(SampleValue.format((run.busySeconds * 1000).rounded() / 1000))",
                "provider": "\(provider.name.rawValue)",
            ])
    }

    /// One warning per failed place, except what is said once: a 400 (a config problem) once
    /// per message, and network failures in a fast retry (the line that armed it said so).
    private func logFailures(of indexes: [Int], in run: RefreshRun) {
        for index in indexes {
            guard case .failure(let error)? = run.outcomes[index] else { continue }
            let name = run.places[index].name
            switch error.cause {
            case .badRequest:
                guard loggedBadRequests.insert(error.message).inserted else { continue }
                logger.error(
                    "the provider refuses the request (HTTP 400): a config problem; asked again only at the interval",
                    metadata: ["location": "\(name)", "reason": "\(error.message)"])
            case .network where run.retriesNetwork:
                continue
            default:
                logger.warning("place refresh failed", metadata: ["location": "\(name)", "reason": "\(error.message)"])
            }
        }
    }

    private static func pacingQuota(_ budget: CallBudget) -> Quota {
        Quota(limits: budget.quota.limits.mapValues { $0 * RefreshPlan.margin })
    }

    private static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
