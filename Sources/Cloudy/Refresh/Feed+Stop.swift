import Dispatch

/// How a feed stops: for good at shutdown (`stop`), or when a reload gives its places to another
/// feed (`retire`: the air quality moved to another quota account). A retired feed asks nothing
/// more, but a batch it has out comes back to it, so the account it was asked on settles its
/// calls and keeps a quota refusal it brings, for the feeds of that account and for a reload back
/// (as the forecast's feed, which a reload never replaces, keeps one for the server it left:
/// `QuotaAccount.beginQuietPeriod`).
extension Feed {
    /// Cancels the timers and aborts a refresh in flight, waiting for it at most `timeout` seconds
    /// (shutdown must not wait on a hung upstream).
    public func stop(timeout: Double = stopWait) {
        client.cancelAll()
        queue.async { self.halt() }
        _ = idle.wait(timeout: .now() + timeout)
    }

    /// How a reload retired the feed (`retire`).
    struct Retirement: Sendable {
        /// No feed spends its account any more (the air quality's own, left for another server
        /// or key); false when another goes on spending it (the weather's).
        let leavesAccount: Bool
    }

    var isRetired: Bool { retired.withLockedValue { $0 != nil } }

    /// Stops asking, as `stop` does, without cutting short a batch out and without waiting for
    /// it (the request's own timeout bounds it; a shutdown cancels it with the client). What the
    /// batch brings back is not recorded or shown: the feed that took over asks these places now.
    /// `settled` runs on the feed's queue once the batch out, if any, has settled.
    public func retire(leavingAccount: Bool, then settled: (@Sendable () -> Void)? = nil) {
        retired.withLockedValue { $0 = Retirement(leavesAccount: leavingAccount) }
        queue.async {
            self.halt()
            settled?()
        }
    }

    /// Nothing more is asked: the refresh under way dropped, its claim on the quota given up, the
    /// timers cancelled. On the queue.
    private func halt() {
        running = false
        run = nil
        claimQuota(places: 0)
        timer?.cancel()
        timer = nil
        staleTimer?.cancel()
        staleTimer = nil
    }

    /// A batch that came back after `retire`: its calls are settled already; a quota refusal
    /// among its answers starts the quiet period of the account it was asked on.
    func settleRetired(_ results: [Result<Report, WeatherFetchError>], of batch: QuotaReservation, now: Double) {
        run = nil
        guard let refusal = Self.quotaRefusal(among: results) else { return }
        _ = beginQuietPeriod(after: refusal, of: batch, now: now, placesWaiting: 0)
    }

    /// The quota refusal among a batch's answers that says the most: one the upstream sent
    /// (`wasAsked`) before one the source inferred without asking.
    static func quotaRefusal(among results: [Result<Report, WeatherFetchError>]) -> WeatherFetchError? {
        let refusals = results.compactMap { outcome -> WeatherFetchError? in
            guard case .failure(let error) = outcome, case .quota = error.cause else { return nil }
            return error
        }
        return refusals.first(where: \.wasAsked) ?? refusals.first
    }
}
