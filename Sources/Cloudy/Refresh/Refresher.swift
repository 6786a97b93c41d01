import Foundation
import Logging

/// The weather feed: the provider the config names, asked on `refresh.interval` by a `Feed`
/// that records into the `WeatherStore`, with `city:` places located first by the `Geocoder`,
/// and spending the provider's quota through its `QuotaAccount` (kept in
/// `<storage.path>/quota.json`). Other feeds that spend the same quota (Open-Meteo's air
/// quality) share `account`. A reload rebuilds the provider only when what is fetched changed,
/// so a provider that keeps its settings keeps its caches (MET's Expires, OWM's call spacing).
public final class Refresher: ScheduledFeed {
    private let store: WeatherStore
    public let client: CurlHTTPClient
    private let logger: Logger
    private let clock: ExporterClock
    /// The budget a config puts this process under (`CallBudget.of`).
    private let callBudget: @Sendable (Config) -> CallBudget
    /// Locates `city:` places for this feed and for the others that ask for the same places.
    let geocoder: Geocoder
    /// The provider's quota, for this feed and every other that spends it.
    public let account: QuotaAccount
    /// `refresh.timeout`, which the provider's requests read: a reload sets it here.
    private let timeout: RequestTimeout
    let feed: Feed<WeatherSnapshot>

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
        self.callBudget = callBudget
        let config = store.config
        let budget = callBudget(config)
        geocoder = Geocoder(
            baseURL: config.geocodingURL, timeout: config.refresh.timeout, storagePath: storagePath, client: client,
            recorder: store.telemetry, logger: logger, clock: clock, jitter: jitter)
        geocoder.update(url: config.geocodingURL, timeout: config.refresh.timeout, places: config.places)
        account = QuotaAccount(
            provider: config.provider.name, url: config.provider.url, quota: budget.quota,
            file: QuotaState.file(in: storagePath), now: clock.now(), logger: logger,
            keyed: config.provider.spendsAKeysQuota, key: config.provider.quotaKey)
        let timeout = RequestTimeout(config.refresh.timeout)
        self.timeout = timeout
        feed = Feed(
            source: ProviderFactory.make(
                config, timeout: timeout, client: client, recorder: store.telemetry, logger: logger, clock: clock),
            schedule: Self.schedule(config, budget: budget), recorder: store, account: account, client: client,
            locator: geocoder, logger: logger, clock: clock, jitter: jitter, claimsQuotaFirst: true)
    }

    private static func schedule(_ config: Config, budget: CallBudget) -> FeedSchedule {
        FeedSchedule(places: config.places, interval: config.refresh.interval, callsPerPlace: budget.callsPerPlace)
    }

    public func start() {
        feed.start()
    }

    /// Cancels the timers and aborts a refresh in flight, waiting for it at most `timeout` seconds
    /// (shutdown must not wait on a hung upstream).
    public func stop(timeout: Double = Feed<WeatherSnapshot>.stopWait) {
        feed.stop(timeout: timeout)
    }

    /// Applies a new config (after a reload): new provider settings, places and interval
    /// (`Feed.apply` says when a refresh runs at once). Calls spent, a quiet period and the
    /// back-off belong to the provider that was asked: they stay while it stays the same;
    /// another one starts afresh (its calls and quiet period where an earlier reload left them,
    /// `QuotaAccount.update`) and is asked at once, a quiet period permitting. A new
    /// `refresh.timeout` or `refresh.parallel_requests` changes how the provider is asked, not
    /// what: it holds from the next request on, and nothing is asked sooner for it.
    public func apply(_ config: Config, previous: Config) {
        let fetchSettingsChanged = !config.provider.asksAlike(previous.provider) || config.forecast != previous.forecast
        // Open-Meteo's batches are the only requests spread over `parallel_requests` lanes.
        let lanesChanged =
            config.provider.name == .openMeteo && config.refresh.parallelRequests != previous.refresh.parallelRequests
        let budget = callBudget(config)
        let restart = account.update(
            provider: config.provider.name, url: config.provider.url, quota: budget.quota,
            keyed: config.provider.spendsAKeysQuota, key: config.provider.quotaKey)
        geocoder.update(url: config.geocodingURL, timeout: config.refresh.timeout, places: config.places)
        timeout.seconds = config.refresh.timeout
        let source =
            fetchSettingsChanged || lanesChanged
            ? ProviderFactory.make(
                config, timeout: timeout, client: client, recorder: store.telemetry, logger: logger, clock: clock)
            : nil
        feed.apply(
            Self.schedule(config, budget: budget), source: source, asksEveryPlace: fetchSettingsChanged,
            restart: restart ? .afresh : nil)
    }

    /// Returns once the work queued so far (a reload's `apply`, a refresh, the look-ups it
    /// began and what they led to) has run.
    func waitForQueuedWork() {
        feed.waitForQueuedWork()
        geocoder.waitForLookUps()
        feed.waitForQueuedWork()  // the feed hears of the look-ups that ended,
        feed.waitForQueuedWork()  // and asks their places together
    }

    /// When the next refresh (or the next batch of a paced one) is due (clock seconds), or nil
    /// when stopped.
    var nextRefresh: Double? { feed.nextRefresh }

    var backoff: Backoff { feed.backoff }

    /// The provider's refusal in force.
    var quietPeriod: QuietPeriod? { account.quietPeriod }

    /// The calls spent in the last `seconds`, as the ledger has them.
    func callsSpent(inLast seconds: Double) -> Double {
        feed.waitForQueuedWork()
        return account.spent(inLast: seconds, at: clock.now())
    }
}
