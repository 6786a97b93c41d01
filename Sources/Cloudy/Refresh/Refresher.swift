import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Drives refreshes from a `DispatchSourceTimer` on a serial queue: the first at start-up,
/// then every `refresh.interval`. A refresh runs on that queue, so a slow one can never overlap
/// the next (Dispatch coalesces the ticks that fall due meanwhile); scrapes never wait on it.
public final class Refresher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "cloudy.refresh")
    private let store: WeatherStore
    private let client: CurlHTTPClient
    private let logger: Logger
    /// Touched only on `queue`.
    private var timer: DispatchSourceTimer?
    private var provider: WeatherProvider
    private var interval: Double
    private let idle = DispatchGroup()

    public init(store: WeatherStore, client: CurlHTTPClient, logger: Logger) {
        self.store = store
        self.client = client
        self.logger = logger
        let config = store.config
        provider = Self.makeProvider(config, client: client, telemetry: store.telemetry)
        interval = config.refresh.interval
    }

    static func makeProvider(_ config: Config, client: CurlHTTPClient, telemetry: ExporterTelemetry) -> WeatherProvider {
        // Config validation admits only `ProviderName.implemented`.
        OpenMeteoProvider(baseURL: config.provider.url, forecast: config.forecast, timeout: config.refresh.timeout,
                          client: client, recorder: telemetry)
    }

    public func start() {
        queue.sync {
            self.client.resume()
            self.scheduleTimer(firstIn: 0)
        }
    }

    /// Cancels the timer and aborts a refresh in flight, waiting for it at most `timeout` seconds.
    public func stop(timeout: Double = 1) {
        client.cancelAll()
        queue.async { self.timer?.cancel(); self.timer = nil }
        _ = idle.wait(timeout: .now() + timeout)
    }

    /// Applies a new config (after a reload): new provider settings and interval, and an
    /// immediate refresh so added places appear without waiting a whole interval.
    public func apply(_ config: Config) {
        queue.async {
            self.provider = Self.makeProvider(config, client: self.client, telemetry: self.store.telemetry)
            self.interval = config.refresh.interval
            if self.timer != nil { self.scheduleTimer(firstIn: 0) }
        }
    }

    /// Runs one refresh now on the refresh queue and returns when it is done (tests, reload).
    public func refreshNow() {
        queue.sync { self.refresh() }
    }

    private func scheduleTimer(firstIn delay: Double) {
        timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + delay, repeating: interval, leeway: .milliseconds(Int(min(1000, interval * 50))))
        timer.setEventHandler { [weak self] in self?.refresh() }
        self.timer = timer
        timer.resume()
    }

    private func refresh() {
        idle.enter()
        defer { idle.leave() }
        let places = store.config.places
        guard !places.isEmpty else { return }
        let started = DispatchTime.now()
        let outcomes = provider.fetch(places, logger: logger)
        let now = Date().timeIntervalSince1970
        store.record(Array(zip(places, outcomes)).map { (place: $0.0, outcome: $0.1) }, at: now)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        store.telemetry.recordRefresh(seconds: seconds)
        store.render(now: now)

        var failed = 0
        for (place, outcome) in zip(places, outcomes) {
            if case let .failure(error) = outcome {
                failed += 1
                logger.warning("place refresh failed", metadata: ["location": "\(place.name)", "reason": "\(error.message)"])
            }
        }
        logger.info("refresh finished", metadata: [
            "places_ok": "\(places.count - failed)", "places_failed": "\(failed)",
            "duration_seconds": "\(SampleValue.format((seconds * 1000).rounded() / 1000))",
            "provider": "\(provider.name.rawValue)",
        ])
    }
}
