import CMalloc
import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The whole exporter, wired: config → store → refresher (Dispatch timer) → HTTP server,
/// started and stopped by a swift-service-lifecycle `ServiceGroup` (SIGTERM/SIGINT), with
/// SIGHUP and `POST /-/reload` re-reading the config. `cloudy_exporter` only parses flags and
/// calls `build`; tests do the same.
public final class CloudyApplication: @unchecked Sendable {
    public let options: ExporterOptions
    public let store: WeatherStore
    public let refresher: Refresher
    public let server: HTTPServer
    let logger: Logger
    let group: MultiThreadedEventLoopGroup
    private let reloadLock = NSLock()
    private let services: ServiceGroup
    private let signals: ProcessSignals

    /// Loads the config (a `ConfigError` here means nothing was started) and binds the listen
    /// addresses (a taken port fails here too).
    public static func build(options: ExporterOptions, logger: Logger) async throws -> CloudyApplication {
        // From here on SIGTERM/SIGINT mean a graceful stop and SIGHUP a reload, even when they
        // arrive during start-up: a signal before `run()` must not kill the process.
        let signals = ProcessSignals(logger: logger)
        let config: Config
        do {
            config = try options.loadConfig()
        } catch {
            signals.cancel()
            throw error
        }
        raiseFileDescriptorLimit()
        // glibc gives each thread that allocates its own arena (up to 8 per core); freed memory
        // then sits in several. Two arenas hold everything a refresh and the server allocate.
        _ = mallopt(M_ARENA_MAX, 2)
        // Blocks from 128 KiB up (the rendered bodies, upstream responses) are mapped on their
        // own, as glibc does by default until the first such block is freed: then it raises the
        // limit to that size and serves the next ones from an arena, where the unused capacity
        // of a buffer (ByteBuffer rounds up to a power of two) can pin pages dirtied earlier.
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        let app = CloudyApplication(options: options, config: config, logger: logger, signals: signals)
        do {
            try await app.server.bind(options.listenAddresses)
        } catch {
            signals.cancel()
            try? await app.group.shutdownGracefully()
            throw error
        }
        return app
    }

    private init(options: ExporterOptions, config: Config, logger: Logger, signals: ProcessSignals) {
        self.options = options
        self.signals = signals
        self.logger = logger
        let now = Date().timeIntervalSince1970
        let telemetry = ExporterTelemetry(startedAt: now)
        let config = Self.clampInterval(config, logger: logger)
        store = WeatherStore(config: config, telemetry: telemetry, telemetryPath: options.telemetryPath, now: now)
        let userAgent = config.provider.userAgent ?? "cloudy_exporter/\(BuildInfo.version) (+https://github.com/cloudy-exporter/cloudy)"
        refresher = Refresher(store: store, client: CurlHTTPClient(userAgent: userAgent), storagePath: options.storagePath, logger: logger)
        group = MultiThreadedEventLoopGroup(numberOfThreads: Self.eventLoopThreads())
        let target = ReloadTarget()
        let routes = Routes(store: store, telemetryPath: options.telemetryPath) { target.app?.reload() }
        server = HTTPServer(group: group, routes: routes, logger: logger)
        // Signals are handled by `installSignalHandlers`, which asks this group to shut down.
        services = ServiceGroup(configuration: .init(
            services: [.init(service: RefreshService(refresher: refresher)), .init(service: server)],
            gracefulShutdownSignals: [],
            logger: logger
        ))
        target.app = self
        let services = self.services
        signals.onStop { Task { await services.triggerGracefulShutdown() } }
        signals.onHangup { [weak self] in
            logger.info("SIGHUP received, reloading the config")
            self?.reload()
        }
        logger.info("config loaded", metadata: [
            "file": "\(options.configFile ?? DefaultConfig.fileName)", "places": "\(config.places.count)",
            "provider": "\(config.provider.name.rawValue)", "interval": "\(PrometheusDuration.format(config.refresh.interval))",
        ])
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, lets scrapes in flight finish,
    /// stops the refresh timer and returns.
    public func run() async throws {
        try await services.run()
        signals.cancel()
        try? await group.shutdownGracefully()
        logger.info("stopped")
    }

    /// Re-reads the config file. A bad new config is refused (logged, counted in
    /// `cloudy_exporter_config_last_reload_successful`) and the old one keeps running.
    /// Returns the reason when refused.
    @discardableResult
    public func reload() -> String? {
        reloadLock.lock()
        defer { reloadLock.unlock() }
        let now = Date().timeIntervalSince1970
        do {
            let config = Self.clampInterval(try options.loadConfig(), logger: logger)
            let previous = store.config
            store.replaceConfig(config)
            store.telemetry.recordReload(successful: true, at: now)
            store.render(now: now)
            refresher.apply(config, previous: previous)
            logger.info("config reloaded", metadata: ["places": "\(config.places.count)"])
            return nil
        } catch {
            store.telemetry.recordReload(successful: false, at: now)
            store.render(now: now)
            logger.error("config reload refused; the old config keeps running", metadata: ["reason": "\(error)"])
            return error.description
        }
    }

    /// Asks the running (or about to run) exporter to stop gracefully, as SIGTERM does.
    public func stop() async {
        await services.triggerGracefulShutdown()
    }

    /// One event-loop thread per CPU this process may run on, at most two: a scrape is a
    /// buffer hand-off, and the refresh runs on Dispatch. The CPUs come from the affinity mask
    /// (`taskset`, cpusets), which NIO's `System.coreCount` does not read; two loops sharing
    /// one CPU only take turns, each waiting a scheduler slice for the other.
    static func eventLoopThreads() -> Int {
        max(1, min(2, allowedCPUs() ?? System.coreCount, System.coreCount))
    }

    /// Bits set in `Cpus_allowed` of /proc/self/status (hex words separated by commas).
    static func allowedCPUs() -> Int? {
        guard let status = ProcessMetrics.readFile("/proc/self/status"),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var count = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character.isHexDigit {
            count += character.hexDigitValue.map(\.nonzeroBitCount) ?? 0
        }
        return count > 0 ? count : nil
    }

    /// Lifts the soft limit on open files to the hard limit (as Go programs do), so a thousand
    /// concurrent scrapers or slow clients cannot exhaust the default 1024 descriptors.
    static func raiseFileDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = min(limit.rlim_max, 1 << 20)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Against a provider's public host, the interval is raised to its fair-use minimum;
    /// any other URL (a self-hosted server, a test fake) gets the interval as written — except
    /// OpenWeatherMap, whose ten-minute call budget holds everywhere.
    static func clampInterval(_ config: Config, logger: Logger) -> Config {
        guard let minimum = FairUse.minimumInterval(provider: config.provider.name, url: config.provider.url),
              config.refresh.interval < minimum else { return config }
        var clamped = config
        clamped.refresh.interval = minimum
        logger.warning("refresh.interval raised to the provider's fair-use minimum", metadata: [
            "configured": "\(PrometheusDuration.format(config.refresh.interval))", "used": "\(PrometheusDuration.format(minimum))",
            "provider": "\(config.provider.name.rawValue)",
        ])
        return clamped
    }
}

/// SIGTERM/SIGINT (stop) and SIGHUP (reload) through Dispatch signal sources, installed first
/// thing at start-up. A signal that arrives before its action is set is remembered and acted
/// on as soon as it is (a stop during start-up stops right after start-up).
final class ProcessSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [DispatchSourceSignal] = []
    private var stopAction: (@Sendable () -> Void)?
    private var hangupAction: (@Sendable () -> Void)?
    private var stopPending = false

    init(logger: Logger) {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                if number == SIGHUP {
                    self.lock.withLock { self.hangupAction }?()
                    return
                }
                logger.info("stopping", metadata: ["signal": "\(number == SIGTERM ? "SIGTERM" : "SIGINT")"])
                let action: (@Sendable () -> Void)? = self.lock.withLock {
                    self.stopPending = self.stopAction == nil
                    return self.stopAction
                }
                action?()
            }
            source.resume()
            sources.append(source)
        }
    }

    func onStop(_ action: @escaping @Sendable () -> Void) {
        let pending = lock.withLock {
            stopAction = action
            return stopPending
        }
        if pending { action() }
    }

    func onHangup(_ action: @escaping @Sendable () -> Void) {
        lock.withLock { hangupAction = action }
    }

    func cancel() {
        lock.withLock {
            for source in sources { source.cancel() }
            sources = []
        }
    }
}

/// Lets the routes call back into the application that owns them without a retain cycle.
private final class ReloadTarget: @unchecked Sendable {
    weak var app: CloudyApplication?
}

/// The public hosts' fair-use floors for the refresh interval.
public enum FairUse {
    public static func minimumInterval(provider: ProviderName, url: String) -> Double? {
        let host = url.lowercased()
        switch provider {
        case .openMeteo where host.hasPrefix("https://api.open-meteo.com") || host.hasPrefix("http://api.open-meteo.com"):
            return 60  // current conditions change every 15 minutes; 10 000 calls a day are free
        case .openWeatherMap:
            // One call per place per ten minutes whatever the host: OpenWeatherMap updates no
            // faster and bills or throttles every call (the provider also enforces this per place).
            return OpenWeatherMapProvider.minimumCallSpacing
        case .metNorway where host.contains("api.met.no"):
            return 600  // MET Norway asks clients to honour Expires (about 30 minutes)
        default:
            return nil
        }
    }
}

/// The refresh timer as a lifecycle service: `run()` starts the Dispatch timer, waits for
/// graceful shutdown, then cancels the timer and aborts the refresh in flight.
struct RefreshService: Service {
    let refresher: Refresher

    func run() async throws {
        refresher.start()
        try? await gracefulShutdown()
        refresher.stop()
    }
}
