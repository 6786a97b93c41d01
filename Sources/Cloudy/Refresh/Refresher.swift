import CMalloc
import Dispatch
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
public final class Refresher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "cloudy.refresh")
    private let store: WeatherStore
    private let client: CurlHTTPClient
    private let logger: Logger
    private let clock: ExporterClock
    /// Uniform in 0…1: spreads the back-off of replicas that failed together.
    private let jitter: @Sendable () -> Double
    private let idle = DispatchGroup()
    private let geocoder: Geocoder
    // Touched only on `queue`:
    private var timer: ScheduledTimer?
    /// When `timer` fires (clock seconds).
    private var timerDeadline: Double?
    private var staleTimer: ScheduledTimer?
    private var running = false
    private var lastStarted = 0.0
    private var provider: WeatherProvider
    private(set) var backoff: Backoff

    public init(
        store: WeatherStore, client: CurlHTTPClient, storagePath: String, logger: Logger,
        clock: ExporterClock = SystemClock(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.store = store
        self.client = client
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
        let config = store.config
        geocoder = Geocoder(
            baseURL: config.geocodingURL, storagePath: storagePath, client: client,
            recorder: store.telemetry, logger: logger, jitter: jitter)
        provider = ProviderFactory.make(config, client: client, recorder: store.telemetry, logger: logger, clock: clock)
        backoff = Backoff(interval: config.refresh.interval)
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
            self.timer?.cancel()
            self.timer = nil
            self.staleTimer?.cancel()
            self.staleTimer = nil
        }
        _ = idle.wait(timeout: .now() + timeout)
    }

    /// Applies a new config (after a reload): new provider settings and interval. When the
    /// reload added places or changed what is fetched, a refresh runs at once (backoff and
    /// Retry-After permitting) so the new places appear without waiting a whole interval; a
    /// reload that changed neither keeps the schedule, so reloading is no way around fair use.
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
            self.backoff.interval = config.refresh.interval
            self.geocoder.baseURL = config.geocodingURL
            let known = Set(previous.places.map(\.name))
            let fetchChanged =
                fetchSettingsChanged
                || config.places.contains { !known.contains($0.name) || !previous.places.contains($0) }
            guard self.running else { return }
            let now = self.clock.now()
            if fetchChanged {
                self.arm(in: self.backoff.notBefore - now)
            } else if config.refresh.interval != previous.refresh.interval {
                self.arm(in: self.backoff.nextRefresh(after: self.lastStarted) - now)
            }
        }
    }

    /// Returns once the work queued so far (a reload's `apply`, a refresh) has run.
    func waitForQueuedWork() {
        queue.sync {}
    }

    /// When the next refresh is due (clock seconds), or nil when stopped.
    var nextRefresh: Double? {
        queue.sync { running ? timerDeadline : nil }
    }

    /// Arms the one-shot refresh timer `delay` seconds from now (at once when ≤ 0).
    private func arm(in delay: Double) {
        timer?.cancel()
        timerDeadline = clock.now() + max(0, delay)
        timer = clock.schedule(after: delay, leeway: min(1, backoff.interval * 0.05), on: queue) { [weak self] in
            guard let self, self.running else { return }
            let started = self.clock.now()
            self.lastStarted = started
            self.refresh()
            if self.running { self.arm(in: self.backoff.nextRefresh(after: started) - self.clock.now()) }
        }
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

    private func refresh() {
        idle.enter()
        defer { idle.leave() }
        let places = store.config.places
        guard !places.isEmpty else { return }
        let started = DispatchTime.now()
        // `city:` places are located first; those not found yet wait while the others are fetched.
        let located = geocoder.locate(places, now: clock.now(), retryInterval: backoff.interval)
        let fetchable = located.compactMap { try? $0.get() }
        var fetched = fetchable.isEmpty ? [] : provider.fetch(fetchable, logger: logger)[...]
        let outcomes: [Result<WeatherSnapshot, WeatherFetchError>] = located.map { location in
            switch location {
            case .success: return fetched.popFirst() ?? .failure(WeatherFetchError("no answer"))
            case .failure(let error): return .failure(error)
            }
        }
        let now = clock.now()
        store.record(
            places.indices.map { (place: places[$0], location: try? located[$0].get(), outcome: outcomes[$0]) },
            at: now)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        store.telemetry.recordRefresh(seconds: seconds)
        store.render(now: now)
        armStaleTimer()
        // Decoding and rendering free megabytes at once; hand them back to the system so the
        // resident size reflects what the exporter keeps, not its peak.
        _ = malloc_trim(0)

        var failed = 0
        for (place, outcome) in zip(places, outcomes) {
            if case .failure(let error) = outcome {
                failed += 1
                logger.warning(
                    "place refresh failed", metadata: ["location": "\(place.name)", "reason": "\(error.message)"])
            }
        }
        // Only a refresh that failed for every place it fetched says the provider is in trouble.
        let providerFailures = zip(located, outcomes).compactMap { location, outcome -> WeatherFetchError? in
            guard case .success = location, case .failure(let error) = outcome else { return nil }
            return error
        }
        if !fetchable.isEmpty, providerFailures.count == fetchable.count {
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
        logger.info(
            "refresh finished",
            metadata: [
                "places_ok": "\(places.count - failed)", "places_failed": "\(failed)",
                "duration_seconds": "\(SampleValue.format((seconds * 1000).rounded() / 1000))",
                "provider": "\(provider.name.rawValue)",
            ])
    }
}
