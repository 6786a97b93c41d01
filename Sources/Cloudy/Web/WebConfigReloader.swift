import Dispatch
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// `--web.config.file`, kept current the way the toolkit does it: re-read for new connections
/// and requests, so a rotated certificate or a changed user list applies without a restart.
/// The web config and the files it names are looked at (stat: inode, size, modification time)
/// at most once a second on the `ExporterClock`, by the connection or request that comes then;
/// only that look happens on the event loop. When a file changed, the re-read (the files, the
/// TLS context, the users) runs on the reloader's own queue, one at a time, and connections go on
/// with the last good config until the new one is ready. A re-read that fails keeps the last good
/// one, logs the reason once, and shows in `cloudy_exporter_web_config_last_reload_successful`.
public final class WebConfigReloader: Sendable {
    /// What connections and requests use until the next good read.
    final class Active: Sendable {
        let config: WebConfig
        let tls: ServerTLS?
        let policy: AccessPolicy

        init(config: WebConfig, tls: ServerTLS?, policy: AccessPolicy) {
            self.config = config
            self.tls = tls
            self.policy = policy
        }
    }

    public static let lastReloadSuccessful = MetricDescriptor(
        "cloudy_exporter_web_config_last_reload_successful", .gauge,
        "1 when the last read of --web.config.file succeeded, else 0 (the last good one stays in force).")
    public static let lastReloadSuccessTimestamp = MetricDescriptor(
        "cloudy_exporter_web_config_last_reload_success_timestamp_seconds", .gauge,
        "Unix time of the last successful read of --web.config.file (start-up counts).")

    public let path: String
    private let clock: ExporterClock
    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    /// Runs a re-read away from the event loop: the reloader's own serial queue (tests: theirs).
    private let offload: HTTPRequestHandler.Offload
    /// bcrypt checks waiting, across re-reads: a new user list keeps the bound.
    let loginChecks: LoginCheckQueue

    private struct State {
        var active: Active
        /// The files besides the web config whose change starts a re-read: those the config in
        /// force names, and after a refused re-read those the refused one names too (a
        /// certificate named before it was in place, or half copied, is read once it is whole).
        var watched: [String]
        var fingerprint: [FileStamp?]
        var checkedAt: Double
        var successful = true
        var successAt: Double
        /// A re-read is under way: no second one starts, no file is looked at meanwhile.
        var rereading = false
    }

    /// Reads the web config; a bad one throws (nothing is started).
    public convenience init(path: String, clock: ExporterClock, logger: Logger) throws(ConfigError) {
        let queue = DispatchQueue(label: "cloudy.web-config", qos: .utility)
        try self.init(path: path, clock: clock, logger: logger, offload: { queue.async(execute: $0) })
    }

    init(
        path: String, clock: ExporterClock, logger: Logger, offload: @escaping HTTPRequestHandler.Offload,
        loginChecks: LoginCheckQueue = LoginCheckQueue()
    ) throws(ConfigError) {
        self.path = path
        self.clock = clock
        self.logger = logger
        self.offload = offload
        self.loginChecks = loginChecks
        let now = clock.now()
        let before = Self.fingerprint(path, [])
        let config = try WebConfigLoader.load(file: path)
        let active = try Self.activate(config, previous: nil, clock: clock, checks: loginChecks, file: path)
        Self.warn(about: config, logger: logger)
        state = NIOLockedValueBox(
            State(
                active: active, watched: config.referencedFiles,
                fingerprint: before + Self.fingerprint(nil, config.referencedFiles), checkedAt: now, successAt: now))
    }

    /// The web config in force. At most once a second it looks whether a file changed, and if
    /// so starts a re-read on the queue; until that is done, this answers the last good config.
    func current() -> Active {
        let now = clock.now()
        let due: (Active, [String])? = state.withLockedValue { state in
            guard !state.rereading, now - state.checkedAt >= 1 || now < state.checkedAt else { return nil }
            state.checkedAt = now
            return (state.active, state.watched)
        }
        guard let (active, files) = due else { return state.withLockedValue { $0.active } }
        let fingerprint = Self.fingerprint(path, files)
        let start = state.withLockedValue { state in
            guard state.fingerprint != fingerprint, !state.rereading else { return false }
            state.rereading = true
            return true
        }
        if start {
            offload { [self] in reread(previous: active, watched: files, fingerprint: fingerprint) }
        }
        return active
    }

    /// Whether a re-read is under way (started by `current()`, not yet in force or refused).
    var isRereading: Bool { state.withLockedValue { $0.rereading } }

    /// Reads the web config again; `fingerprint` is what the look that started it saw of it and
    /// of the `watched` files.
    private func reread(previous: Active, watched files: [String], fingerprint: [FileStamp?]) {
        do {
            let before = Self.fingerprint(path, [])
            let config = try WebConfigLoader.load(file: path)
            if (config.tls == nil) != (previous.tls == nil) {
                throw ConfigError(
                    file: path, field: "tls_server_config",
                    reason: "TLS cannot be turned \(config.tls == nil ? "off" : "on") without a restart")
            }
            let active = try Self.activate(
                config, previous: previous, clock: clock, checks: loginChecks, file: path)
            // The files the new config names may differ from the old ones'.
            let stamp = before + Self.fingerprint(nil, config.referencedFiles)
            let now = clock.now()
            state.withLockedValue { state in
                state.active = active
                state.watched = config.referencedFiles
                state.fingerprint = stamp
                state.successful = true
                state.successAt = now
                state.rereading = false
            }
            logger.info("web config re-read", metadata: ["file": "\(path)", "tls": "\(config.tls != nil)"])
            Self.warn(about: config, logger: logger)
        } catch {
            // Remember what the look saw: the same broken files are not read (nor logged) again.
            // The files the refused config names are watched too; one the look did not see yet
            // counts as absent, so it is read once more if it is there (then it has a stamp).
            var seen: [String: FileStamp?] = [:]
            for (file, stamp) in zip([path] + files, fingerprint) { seen[file] = stamp }
            let named = (error as? ConfigError)?.namedFiles ?? []
            state.withLockedValue { state in
                var watched = state.active.config.referencedFiles
                for file in named where file != path && !watched.contains(file) { watched.append(file) }
                let stamps = ([path] + watched).map { seen[$0] ?? nil }
                state.watched = watched
                state.fingerprint = stamps
                state.successful = false
                state.rereading = false
            }
            logger.error(
                "web config re-read refused; the last good one stays in force",
                metadata: ["reason": "\(error)"])
        }
    }

    /// What a web config allows but Cloudy advises against, logged at start and at each re-read.
    private static func warn(about config: WebConfig, logger: Logger) {
        for warning in config.warnings() {
            logger.warning("web config: \(warning)")
        }
    }

    /// Builds what connections use; keeps the dummy hash, the login cache and the rate limit's
    /// bucket of the previous config when what they depend on did not change.
    private static func activate(
        _ config: WebConfig, previous: Active?, clock: ExporterClock, checks: LoginCheckQueue, file: String
    ) throws(ConfigError) -> Active {
        var tls: ServerTLS?
        if let settings = config.tls {
            do {
                // The context the loader built to check the key: not built a second time.
                tls = try ServerTLS(settings)
            } catch {
                throw ConfigError(file: file, field: "tls_server_config", reason: "TLS cannot use it: \(error)")
            }
        }
        var auth: BasicAuth?
        if !config.users.isEmpty {
            let cost = BasicAuth.dummyCost(config.users)
            if let old = previous?.policy.auth, old.users == config.users {
                auth = old
            } else if let old = previous?.policy.auth, Bcrypt.cost(of: old.dummyHash) == cost {
                auth = BasicAuth(users: config.users, dummyHash: old.dummyHash, checks: checks)
            } else {
                auth = BasicAuth(users: config.users, dummyHash: Bcrypt.dummyHash(cost: cost), checks: checks)
            }
        }
        var bucket: TokenBucket?
        // interval 0: no limiter, as in the toolkit.
        if let limit = config.rateLimit, !limit.isOff {
            bucket =
                previous?.policy.rateLimit.flatMap { $0.limit == limit ? $0 : nil } ?? TokenBucket(limit, clock: clock)
        }
        let policy = AccessPolicy(
            headers: config.headers, auth: auth, rateLimit: bucket, openPaths: config.authExcludedPaths)
        return Active(config: config, tls: tls, policy: policy)
    }

    /// `page` with the two gauges added: the live tail of `/metrics` (only when a web config is
    /// in use, so the pages without one stay as they were).
    public func addMetrics(to page: MetricFamilies) -> MetricFamilies {
        let (successful, at) = state.withLockedValue { ($0.successful, $0.successAt) }
        var page = page
        page.add(Self.lastReloadSuccessful, value: successful ? 1 : 0)
        page.add(Self.lastReloadSuccessTimestamp, value: at)
        return page
    }

    /// What a look sees of a file: its identity, size, content time and status time (a chmod
    /// that makes an unreadable key readable changes only the last).
    struct FileStamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
        var statusSeconds = 0, statusNanoseconds = 0
    }

    private static func fingerprint(_ path: String?, _ files: [String]) -> [FileStamp?] {
        ((path.map { [$0] } ?? []) + files).map { file in
            var info = stat()
            guard stat(file, &info) == 0 else { return nil }
            return FileStamp(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec, statusSeconds: info.st_ctim.tv_sec,
                statusNanoseconds: info.st_ctim.tv_nsec)
        }
    }
}
