import Dispatch
import Logging
import NIOConcurrencyHelpers

/// The schedule of one upstream (a `FeedSource`) for a set of places: refreshes from one-shot
/// timers on a serial queue, the first at start-up, then every `FeedSchedule.interval` — later
/// while the upstream fails (`Backoff`, with jitter and `Retry-After`). The timer is armed again
/// only when a refresh has finished, so a slow refresh never overlaps the next; scrapes never
/// wait on it. A second timer re-renders the pages when a recorded value reaches its stale
/// cutoff, so stale series vanish on time even while refreshes wait. Time comes from an
/// `ExporterClock` (Dispatch and the wall clock in production; a manual clock in tests).
///
/// Within the quota (`QuotaAccount`, shared with the other feeds that spend it): a refresh that
/// costs more than a window allows is paced, and the pages are rendered after each batch. A
/// quota refusal starts a `QuietPeriod` for the whole account: nothing goes to the owner until
/// it lifts, then the refresh asks the places still waiting. A first refresh that fails because
/// the network is not there yet is retried after 2 s, 4 s, 8 s, … up to the interval, for the
/// places that never had an answer. The steps of a refresh are in `Feed+Refresh.swift`.
///
/// Threads: `start` and the readings (`nextRefresh`, a clock time; `backoff`;
/// `waitForQueuedWork`) wait for the queue, `stop` for the refresh under way at most its
/// `timeout`; `apply` (a reload) is queued and returns at once, so
/// a test waits for the queued work before it reads or advances the clock. The source's `fetch`
/// and every `FeedRecorder` call run on the queue: from there, those that wait would deadlock.
public final class Feed<Report: Sendable>: @unchecked Sendable {
    let queue: DispatchQueue
    let recorder: any FeedRecorder<Report>
    let account: QuotaAccount
    let client: CurlHTTPClient
    let logger: Logger
    let clock: ExporterClock
    /// Uniform in 0…1: spreads the back-off of replicas that failed together.
    let jitter: @Sendable () -> Double
    /// Locates `city:` places before they are asked; nil: every place has coordinates.
    let locator: (any PlaceLocator)?
    /// Its refreshes have the first claim on the quota (the weather's): the account's other
    /// feeds yield to the places it waits to ask (`QuotaAccount.claimFirst`).
    let claimsQuotaFirst: Bool
    let idle = DispatchGroup()
    /// A reload gave its places to another feed (`retire`): a batch still out only settles.
    let retired = NIOLockedValueBox<Retirement?>(nil)
    // Touched only on `queue`:
    var source: any FeedSource<Report>
    var schedule: FeedSchedule
    var timer: ScheduledTimer?
    /// When `timer` fires (clock seconds).
    var timerDeadline: Double?
    var staleTimer: ScheduledTimer?
    var running = false
    /// When the last refresh of every place started (or resumed after a quiet period).
    var lastStarted = 0.0
    var backoffState: Backoff
    /// The refresh under way while it waits between paced batches or for a quiet period.
    var run: RefreshRun<Report>?
    /// The quiet period the recorder was last told of.
    var shownQuietPeriod: QuietPeriod?
    /// The paced batch the recorder was last told of.
    var shownPacedUntil: Double?
    /// Fast retries so far for places whose first fetch failed for the network.
    var networkRetries = 0
    /// The timer armed is such a fast retry.
    var armedForNetwork = false
    /// The places the armed refresh asks (nil: every place, or no refresh armed).
    var armedOnly: Set<String>?
    /// 400 answers already logged (by message): a config problem is said once.
    var loggedBadRequests: Set<String> = []
    /// Places (by name) that got an answer since they were configured as they are.
    var answered: Set<String> = []
    /// Places whose look-up ended while a refresh was under way, or since the last was asked:
    /// the next refresh asks them.
    var lookedUpMeanwhile: Set<String> = []
    /// A refresh of the places in `lookedUpMeanwhile` is queued.
    var askingLookedUp = false

    /// The first retry after a network failure before a place's first success; each next
    /// one waits twice as long, until the wait would reach the interval.
    static var firstNetworkRetry: Double { 2 }
    /// How long after a past batch leaves a window the next paced batch goes out.
    static var pacingMargin: Double { 1 }
    /// How long a stop waits for the refresh in flight: libcurl notices a cancel at its next
    /// progress tick, up to a second away while an answer is awaited. Waiting that out lets the
    /// refresh settle its calls, so quota.json takes back the requests the stop kept from going out.
    public static var stopWait: Double { 1.5 }

    /// A feed asking `source` for `schedule`'s places, spending `account`, recording into
    /// `recorder`. `client` is the one `source` fetches through: `stop` cancels it (feeds that
    /// share a client stop together).
    public init(
        source: any FeedSource<Report>, schedule: FeedSchedule, recorder: any FeedRecorder<Report>,
        account: QuotaAccount, client: CurlHTTPClient, locator: (any PlaceLocator)? = nil, logger: Logger,
        clock: ExporterClock, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        claimsQuotaFirst: Bool = false
    ) {
        queue = DispatchQueue(label: "cloudy.feed.\(source.providerLabel)")
        self.source = source
        self.schedule = schedule
        self.recorder = recorder
        self.account = account
        self.client = client
        self.locator = locator
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
        self.claimsQuotaFirst = claimsQuotaFirst
        backoffState = Backoff(interval: schedule.interval)
        // A refusal kept over a restart holds this feed too, and its places say so at once.
        if let quiet = account.quietPeriod, quiet.until > clock.now() {
            backoffState.hold(until: quiet.until)
            recorder.setQuietPeriod(quiet)
            shownQuietPeriod = quiet
        }
        account.observeQuietPeriods(for: self) { feed, quiet in feed.queue.async { feed.quietPeriodBegan(quiet) } }
    }

    public func start() {
        queue.sync {
            self.client.resume()
            self.running = true
            self.arm(in: 0)
        }
    }

    /// Applies a reloaded schedule; `source` is the upstream rebuilt when what is fetched changed
    /// (nil: it stays, with its caches), or when only how it is asked changed (`asksEveryPlace`
    /// false: it takes over as it is, the schedule unmoved); `restart` (nil: none) starts its
    /// back-off afresh, keeping the server's own `Retry-After` when it is the same server. When places were added or changed where they are asked
    /// (`Place.isAskedAlike`), they are asked at once (back-off, Retry-After and a quiet period
    /// permitting), so new places appear without waiting a whole interval: beside the schedule,
    /// which the other places keep; or, with a paced refresh under way, in a refresh of its places
    /// still waiting and the new ones, not its first places again. When what is fetched changed,
    /// every place is asked at once. A reload that changed neither (only units, thresholds, or
    /// places removed) keeps the schedule: a paced refresh goes on without the removed places, an
    /// armed fast network retry stays; its next batch moves only when the quota changed. So
    /// reloading is no way around fair use.
    public func apply(
        _ schedule: FeedSchedule, source: (any FeedSource<Report>)?, asksEveryPlace: Bool = true,
        restart: Backoff.Restart?
    ) {
        queue.async {
            let previous = self.schedule
            self.schedule = schedule
            if let source { self.source = source }
            let fetchChanged = source != nil && asksEveryPlace
            self.loggedBadRequests = []
            self.backoffState.interval = schedule.interval
            if let restart {
                self.backoffState = self.backoffState.restarted(restart, interval: schedule.interval)
                self.show(self.account.quietPeriod)
            }
            var before: [String: Place] = [:]
            for place in previous.places { before[place.name] = place }
            // The places asked as before; the others were added, or moved (coordinates, city or
            // time zone), and start again as never answered, as the store starts them afresh.
            let unchanged = Set(schedule.places.filter { before[$0.name]?.isAskedAlike($0) == true }.map(\.name))
            let new = schedule.places.filter { !unchanged.contains($0.name) }
            self.answered.formIntersection(unchanged)
            // A refresh under way goes on without the places removed or changed.
            self.run?.keep(only: unchanged)
            let waiting = self.run.map { run in run.pending.map { run.places[$0].name } } ?? []
            guard self.running else { return }
            // The reload may have moved the stale deadline (`refresh.stale_after`, places removed),
            // and a refresh armed below no longer waits for a quiet period shown.
            defer { self.armStaleTimer() }
            let now = self.clock.now()
            if !fetchChanged, self.run == nil, !new.isEmpty, !unchanged.isEmpty {
                // Only the added or changed places are asked now, beside the schedule: the
                // others are not asked again before their time (a per-place upstream counts
                // each of them), and the refresh armed stays, at the new interval.
                if schedule.interval != previous.interval, !self.armedForNetwork, self.armedOnly == nil {
                    self.arm(in: self.backoffState.nextRefresh(after: self.lastStarted) - now)
                }
                self.askBesideSchedule(Set(new.map(\.name)))
            } else if fetchChanged || !new.isEmpty {
                // A refresh under way (paced, or waiting for a quiet period) with the same fetch
                // settings goes on with its places still waiting, plus the added or changed ones,
                // rather than asking its first places again.
                let only = !fetchChanged && self.run != nil ? Set(waiting + new.map(\.name)) : nil
                self.arm(in: self.backoffState.notBefore - now, only: only)
            } else if schedule.interval != previous.interval, self.run == nil, !self.armedForNetwork,
                self.armedOnly == nil
            {
                // A fast retry armed stays: the network is still awaited. So does the refresh an
                // earlier reload armed for the places a paced refresh had not asked yet.
                self.arm(in: self.backoffState.nextRefresh(after: self.lastStarted) - now)
            } else if let run = self.run, !run.waitsForQuietPeriod {
                // A paced refresh waits for room in a quota the reload may have changed: its next
                // batch goes when the new one has room (at once, if it has now).
                let paced = self.pacedUntil(run, now: now)
                if self.showPacing(paced) {
                    self.recorder.render(now: now)
                    self.armNextBatch(of: run, pacedUntil: paced, now: now)
                }
            }
        }
    }

    /// Tells the recorder of the quiet period in force (nil: none), once per change.
    func show(_ quiet: QuietPeriod?) {
        guard quiet != shownQuietPeriod else { return }
        shownQuietPeriod = quiet
        recorder.setQuietPeriod(quiet)
    }

    /// A feed of the account was refused (this one, or another that spends the same quota): the
    /// places say so on the pages now, not at this feed's next step, and no longer once it lifts
    /// (the stale timer's re-render, when no step of this feed comes first).
    func quietPeriodBegan(_ quiet: QuietPeriod) {
        guard running, quiet != shownQuietPeriod, quiet.until > clock.now() else { return }
        show(quiet)
        recorder.render(now: clock.now())
        armStaleTimer()
    }

    /// Returns once the work queued so far (a reload's `apply`, a refresh) has run.
    public func waitForQueuedWork() {
        queue.sync {}
    }

    /// When the next refresh (or the next batch of a paced one) is due (clock seconds), or nil
    /// when stopped.
    public var nextRefresh: Double? {
        queue.sync { running ? timerDeadline : nil }
    }

    /// The back-off as it stands.
    public var backoff: Backoff {
        queue.sync { backoffState }
    }

    /// Arms the one-shot refresh timer `delay` seconds from now (at once when ≤ 0), for every
    /// place or only those named; a refresh under way is given up.
    func arm(in delay: Double, only names: Set<String>? = nil, retryingNetwork: Bool = false) {
        run = nil
        // The refresh armed claims the quota for its places from when it is due, so another
        // feed's timer that fires first (the same interval, a reload) leaves it its room.
        claimQuota(places: names?.count ?? schedule.places.count, from: clock.now() + max(0, delay))
        armedForNetwork = retryingNetwork
        armedOnly = names
        setTimer(in: delay) { [weak self] in
            guard let self, self.running else { return }
            self.armedOnly = nil
            self.begin(only: names, retryingNetwork: retryingNetwork)
        }
    }

    /// Arms the timer for the next step of the refresh under way. One that waits for a quiet
    /// period to lift claims the quota for the places `claiming` (`claimQuota`): the first window
    /// after the lift is the forecast's first.
    func armStep(in delay: Double, claiming places: Int = 0) {
        if places > 0 { claimQuota(places: places, from: clock.now() + max(0, delay)) }
        setTimer(in: delay) { [weak self] in
            guard let self, self.running else { return }
            self.step()
        }
    }

    private func setTimer(in delay: Double, _ action: @escaping @Sendable () -> Void) {
        timer?.cancel()
        timerDeadline = clock.now() + max(0, delay)
        timer = clock.schedule(after: delay, leeway: min(1, backoffState.interval * 0.05), on: queue, action)
    }

    /// Arms the re-render for the moment the next recorded value goes stale, or a quiet period
    /// shown on the pages lifts.
    func armStaleTimer() {
        staleTimer?.cancel()
        staleTimer = nil
        // A quiet period shown while no refresh waits for it ends on the pages when it lifts.
        let shownUntil = run?.waitsForQuietPeriod == true ? nil : shownQuietPeriod?.until
        guard running, let deadline = [recorder.nextStaleDeadline(), shownUntil].compactMap({ $0 }).min() else {
            return
        }
        staleTimer = clock.schedule(after: deadline - clock.now() + 0.01, leeway: 0, on: queue) { [weak self] in
            guard let self, self.running else { return }
            let now = self.clock.now()
            if let shown = self.shownQuietPeriod, now >= shown.until, self.run?.waitsForQuietPeriod != true {
                self.show(self.account.quietPeriod.flatMap { $0.until > now ? $0 : nil })
            }
            self.recorder.render(now: now)
            self.armStaleTimer()
        }
    }
}
