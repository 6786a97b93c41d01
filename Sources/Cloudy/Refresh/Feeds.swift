import Dispatch
import Logging
import NIOConcurrencyHelpers

/// Every upstream the exporter asks on a schedule, started, stopped and reloaded together by
/// the application (`RefreshService`, `ConfigReloader`). The weather (`Refresher`) comes first;
/// each other source adds its `ConfiguredFeed` here.
public struct Feeds: Sendable {
    public let all: [any ScheduledFeed]

    public init(_ all: [any ScheduledFeed]) {
        self.all = all
    }

    public func start() {
        for feed in all { feed.start() }
    }

    /// Stops them side by side, so shutdown waits `timeout` at most, not once per feed: every
    /// request out is cut short first (a hung one notices within about a second, its transfer's
    /// progress check), then each feed waits for its refresh until one deadline, which
    /// `concurrentPerform`, as wide as the machine has cores, would otherwise give each wave
    /// of feeds afresh.
    public func stop(timeout: Double = Feed<WeatherSnapshot>.stopWait) {
        let all = self.all
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        for feed in all { feed.client.cancelAll() }
        DispatchQueue.concurrentPerform(iterations: all.count) { index in
            let now = DispatchTime.now().uptimeNanoseconds
            all[index].stop(timeout: now < deadline ? Double(deadline - now) / 1e9 : 0)
        }
    }

    /// Applies a config accepted by a reload to each feed, with its `provider.user_agent`.
    public func apply(_ config: Config, previous: Config) {
        for feed in all {
            feed.client.userAgent = config.provider.userAgentInUse
            feed.apply(config, previous: previous)
        }
    }
}

/// A `Feed` driven by the config: what the application builds for a source that needs no more
/// than its schedule and its source from the config. A reload applies the new schedule, and
/// rebuilds the source only when `sourceChanged` says what it fetches changed (so a source that
/// stays keeps its caches, such as MET Norway's `Expires`). The source is given `refresh.timeout`
/// as a `RequestTimeout` for its `Upstream`: a reload sets it, asking nothing again for it.
public final class ConfiguredFeed<Report: Sendable>: ScheduledFeed {
    public let feed: Feed<Report>
    private let schedule: @Sendable (Config) -> FeedSchedule
    private let source: @Sendable (Config, RequestTimeout) -> any FeedSource<Report>
    private let sourceChanged: @Sendable (_ config: Config, _ previous: Config) -> Bool
    /// The server the source asks (its `url:`), nil while it is not configured.
    private let server: @Sendable (Config) -> String?
    /// The last server configured, across reloads that left the source out for a while.
    private let lastServer: NIOLockedValueBox<String?>
    private let timeout: RequestTimeout

    public init(
        config: Config, recorder: any FeedRecorder<Report>, account: QuotaAccount, client: CurlHTTPClient,
        locator: (any PlaceLocator)?, logger: Logger, clock: ExporterClock,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        schedule: @escaping @Sendable (Config) -> FeedSchedule,
        source: @escaping @Sendable (Config, RequestTimeout) -> any FeedSource<Report>,
        sourceChanged: @escaping @Sendable (_ config: Config, _ previous: Config) -> Bool,
        server: @escaping @Sendable (Config) -> String?
    ) {
        self.schedule = schedule
        self.source = source
        self.sourceChanged = sourceChanged
        self.server = server
        lastServer = NIOLockedValueBox(server(config))
        let timeout = RequestTimeout(config.refresh.timeout)
        self.timeout = timeout
        feed = Feed(
            source: source(config, timeout), schedule: schedule(config), recorder: recorder, account: account,
            client: client, locator: locator, logger: logger, clock: clock, jitter: jitter)
    }

    public func start() { feed.start() }

    public func stop(timeout: Double) { feed.stop(timeout: timeout) }

    public var client: CurlHTTPClient { feed.client }

    /// A source rebuilt (another `url:`, a source added back) starts its back-off afresh: the old
    /// one's failures say nothing of it, so it is asked at once. Only a `Retry-After` that the
    /// same server sent still holds (a source removed and added back in two reloads).
    public func apply(_ config: Config, previous: Config) {
        timeout.seconds = config.refresh.timeout
        let changed = sourceChanged(config, previous)
        let server = server(config)
        let sameServer = lastServer.withLockedValue { last in
            defer { if server != nil { last = server } }
            guard let server, let last else { return server == nil }
            return ProviderSettings.isSameServer(server, last)
        }
        feed.apply(
            schedule(config), source: changed ? source(config, timeout) : nil,
            restart: changed ? (sameServer ? .keepingRetryAfter : .afresh) : nil)
    }
}
