import Logging
import NIOPosix
import ServiceLifecycle

/// The whole exporter, wired: config → store → feeds → HTTP server, started and stopped by a
/// swift-service-lifecycle `ServiceGroup`, with `ProcessSignals` turning SIGTERM/SIGINT into a
/// graceful stop and SIGHUP into a `ConfigReloader` run. `cloudy_exporter` parses the flags and
/// calls `build`, then `run`.
public final class CloudyApplication: Sendable {
    public let options: ExporterOptions
    public let store: WeatherStore
    public let refresher: Refresher
    /// Every upstream asked on a schedule: the weather first.
    public let feeds: Feeds
    public let server: HTTPServer
    let reloader: ConfigReloader
    private let logger: Logger
    private let group: MultiThreadedEventLoopGroup
    private let services: ServiceGroup
    private let signals: ProcessSignals

    /// Loads the config (a `ConfigError` here means nothing was started) and binds the listen
    /// addresses (a taken port fails here too).
    public static func build(
        options: ExporterOptions, logger: Logger,
        clock: ExporterClock = SystemClock()
    ) async throws -> CloudyApplication {
        // From here on SIGTERM/SIGINT mean a graceful stop and SIGHUP a reload, even when they
        // arrive during start-up: a signal before `run()` must not kill the process.
        let signals = ProcessSignals(logger: logger)
        let config: Config
        let webConfig: WebConfigReloader?
        do {
            config = try FairUse.clampInterval(
                try options.loadConfig(), file: options.configFile ?? DefaultConfig.fileName, logger: logger)
            webConfig = try options.webConfigFile.map { path throws(ConfigError) in
                try WebConfigReloader(path: path, clock: clock, logger: logger)
            }
        } catch {
            signals.cancel()
            throw error
        }
        do {
            try StorageLock.acquire(options.storagePath, logger: logger)
        } catch {
            signals.cancel()
            throw error
        }
        RuntimeTuning.apply()
        let app = CloudyApplication(
            options: options, config: config, webConfig: webConfig, logger: logger, signals: signals, clock: clock)
        do {
            try await app.server.bind(options.listenAddresses)
        } catch {
            signals.cancel()
            // The addresses bound before the one that failed close before their event loops go.
            await app.server.closeBound()
            try? await app.group.shutdownGracefully()
            throw error
        }
        return app
    }

    private init(
        options: ExporterOptions, config: Config, webConfig: WebConfigReloader?, logger: Logger,
        signals: ProcessSignals, clock: ExporterClock
    ) {
        self.options = options
        self.signals = signals
        self.logger = logger
        let now = clock.now()
        let telemetry = ExporterTelemetry(startedAt: now)
        telemetry.recordPlans(of: config)
        let connections = Self.connectionLimit(options, logger: logger)
        // With a web config, its gauges join the live tail.
        var processMetrics: @Sendable () -> MetricFamilies = { Self.liveFamilies(connections: connections) }
        if let webConfig {
            processMetrics = { webConfig.addMetrics(to: Self.liveFamilies(connections: connections)) }
        }
        store = WeatherStore(
            config: config, telemetry: telemetry,
            telemetryPath: options.telemetryPath, now: now, processMetrics: processMetrics)
        let userAgent = config.provider.userAgentInUse
        refresher = Refresher(
            store: store, client: CurlHTTPClient(userAgent: userAgent), storagePath: options.storagePath,
            logger: logger, clock: clock)
        feeds = Feeds(
            [
                refresher,
                Self.airQualityFeed(
                    config, store: store, weather: refresher, userAgent: userAgent, storagePath: options.storagePath,
                    logger: logger, clock: clock),
            ] + Self.warningFeeds(config, store, refresher, userAgent, logger, clock))
        let reloader = ConfigReloader(options: options, store: store, feeds: feeds, clock: clock, logger: logger)
        self.reloader = reloader
        group = MultiThreadedEventLoopGroup(numberOfThreads: RuntimeTuning.eventLoopThreads())
        let routes = Routes(store: store, telemetryPath: options.telemetryPath, webConfig: webConfig) {
            reloader.reload()
        }
        server = HTTPServer(group: group, routes: routes, logger: logger, connections: connections)
        // Signals are handled by `ProcessSignals`, which asks this group to shut down.
        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: RefreshService(feeds: feeds)), .init(service: server)],
                gracefulShutdownSignals: [],
                logger: logger
            ))
        self.services = services
        signals.onStop { Task { await services.triggerGracefulShutdown() } }
        signals.onHangup {
            logger.info("SIGHUP received, reloading the config")
            reloader.reload()
        }
        logger.info(
            "config loaded",
            metadata: [
                "file": "\(options.configFile ?? DefaultConfig.fileName)", "places": "\(config.places.count)",
                "provider": "\(config.provider.name.rawValue)",
                "interval": "\(PrometheusDuration.format(config.refresh.interval))",
            ])
        for doubt in config.doubts(at: now) { logger.warning("\(doubt)") }
    }

    /// The official warning services, one feed each, locating `city:` places through the
    /// weather's geocoder (one look-up, shared).
    private static func warningFeeds(
        _ config: Config, _ store: WeatherStore, _ refresher: Refresher, _ userAgent: String, _ logger: Logger,
        _ clock: ExporterClock
    ) -> [any ScheduledFeed] {
        WarningFeeds.make(
            config: config, store: store, locator: refresher.geocoder, userAgent: userAgent, logger: logger,
            clock: clock)
    }

    /// What every scrape appends, read now: `process_*` and the server's connection counts.
    static func liveFamilies(connections: ConnectionLimit) -> MetricFamilies {
        var live = ProcessMetrics.page()
        connections.addSamples(to: &live)
        return live
    }

    /// `--web.max-connections`, lowered (with a warning) when the open-file limit is lower.
    private static func connectionLimit(_ options: ExporterOptions, logger: Logger) -> ConnectionLimit {
        let maximum = ConnectionLimit.effectiveMaximum(requested: options.maxConnections)
        if maximum < options.maxConnections {
            logger.warning(
                "web.max-connections lowered to fit the open-file limit",
                metadata: [
                    "requested": "\(options.maxConnections)", "max_connections": "\(maximum)",
                    "open_file_limit": "\(ConnectionLimit.currentDescriptorLimit().map(String.init) ?? "none")",
                ])
        }
        return ConnectionLimit(maximum: maximum)
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, lets scrapes in flight finish,
    /// stops the refresh timer and returns.
    public func run() async throws {
        try await services.run()
        signals.cancel()
        try? await group.shutdownGracefully()
        logger.info("stopped")
    }

    /// Re-reads the config file, as SIGHUP does; returns the reason when the new one was refused.
    @discardableResult
    public func reload() -> String? {
        reloader.reload()
    }

    /// Asks the running (or about to run) exporter to stop gracefully, as SIGTERM does.
    public func stop() async {
        await services.triggerGracefulShutdown()
    }
}
