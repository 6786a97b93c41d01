import ServiceLifecycle

/// The refresh timer as a lifecycle service: `run()` starts the timer, waits for graceful
/// shutdown, then cancels the timer and aborts the refresh in flight.
struct RefreshService: Service {
    let refresher: Refresher

    func run() async throws {
        refresher.start()
        try? await gracefulShutdown()
        refresher.stop()
    }
}
