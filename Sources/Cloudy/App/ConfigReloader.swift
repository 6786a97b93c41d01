import Foundation
import Logging

/// Re-reads the config file on SIGHUP or `POST /-/reload`. A bad new config is refused (logged,
/// counted in `cloudy_exporter_config_last_reload_successful`) and the old one keeps running;
/// a good one replaces the places in the store and reschedules every feed.
final class ConfigReloader: Sendable {
    private let options: ExporterOptions
    private let store: WeatherStore
    private let feeds: Feeds
    private let clock: ExporterClock
    private let logger: Logger
    /// One reload at a time: two at once could apply their configs in either order.
    private let lock = NSLock()

    init(options: ExporterOptions, store: WeatherStore, feeds: Feeds, clock: ExporterClock, logger: Logger) {
        self.options = options
        self.store = store
        self.feeds = feeds
        self.clock = clock
        self.logger = logger
    }

    /// Returns the reason when the new config was refused, nil when it is in force.
    @discardableResult
    func reload() -> String? {
        lock.lock()
        defer { lock.unlock() }
        let now = clock.now()
        do {
            let config = try FairUse.clampInterval(
                try options.loadConfig(), file: options.configFile ?? DefaultConfig.fileName, logger: logger)
            let previous = store.config
            store.telemetry.recordPlans(of: config)
            store.replaceConfig(config)
            store.telemetry.recordReload(successful: true, at: now)
            store.render(now: now)
            feeds.apply(config, previous: previous)
            logger.info("config reloaded", metadata: ["places": "\(config.places.count)"])
            for doubt in config.doubts(at: now) { logger.warning("\(doubt)") }
            return nil
        } catch {
            // Said before the page says it: whoever sees the reload fail there finds why in the log.
            logger.error("config reload refused; the old config keeps running", metadata: ["reason": "\(error)"])
            store.telemetry.recordReload(successful: false, at: now)
            store.render(now: now)
            return error.description
        }
    }
}
