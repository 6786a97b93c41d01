import ServiceLifecycle

/// The feeds' timers as a lifecycle service: `run()` starts every feed, waits for graceful
/// shutdown, then cancels their timers and aborts the refreshes in flight.
struct RefreshService: Service {
    let feeds: Feeds

    func run() async throws {
        feeds.start()
        try? await gracefulShutdown()
        feeds.stop()
    }
}
