import Logging

/// How a feed's refresh keeps within its quota (`QuotaAccount`): the next paced batch armed for
/// when there is room, and the quiet period a quota refusal starts.
extension Feed {
    /// Arms the next step of `run` for `pacedUntil` (its `pacedUntil(_:now:)`; nil: at once);
    /// the first wait of a run is logged.
    func armNextBatch(of run: RefreshRun<Report>, pacedUntil: Double?, now: Double) {
        var run = run
        let wait = pacedUntil.map { $0 - now } ?? 0
        if wait > 0, !run.toldPacing {
            run.toldPacing = true
            logger.info(
                "refresh paced to stay within the provider's quota",
                metadata: [
                    "provider": "\(source.providerLabel)", "places_waiting": "\(run.pending.count)",
                    "next_batch_in_seconds": "\(SampleValue.format(wait.rounded()))",
                ])
        }
        self.run = run
        armStep(in: wait)
    }

    /// When the next batch of `run` goes while it waits for room in the quota; nil when there is
    /// room now, or nothing waits.
    func pacedUntil(_ run: RefreshRun<Report>, now: Double) -> Double? {
        guard !run.pending.isEmpty else { return nil }
        let room = account.nextRoom(callsPerPlace: schedule.callsPerPlace, after: now, yielding: !claimsQuotaFirst)
        return room > now ? room + Self.pacingMargin : nil
    }

    /// Reserves the next batch of `run`: a feed with the first claim on its quota gives it up
    /// once a batch of it goes (a window too full for one keeps it); any other yields to it.
    func reserveBatch(of run: RefreshRun<Report>, at now: Double) -> QuotaReservation {
        let cost = schedule.callsPerPlace
        let batch = account.reserve(upTo: run.pending.count, callsPerPlace: cost, at: now, yielding: !claimsQuotaFirst)
        if batch.places > 0 { claimQuota(places: 0) }
        return batch
    }

    /// Claims the quota first for `places` places of a refresh due at `from` (0 places: none),
    /// when this feed has the first claim (`QuotaAccount.claimFirst`).
    func claimQuota(places: Int, from: Double = 0) {
        if claimsQuotaFirst { account.claimFirst(places: places, callsPerPlace: schedule.callsPerPlace, from: from) }
    }

    /// Tells the recorder when the next paced batch goes (nil: none waits), once per change;
    /// returns whether it changed.
    @discardableResult
    func showPacing(_ until: Double?) -> Bool {
        guard until != shownPacedUntil else { return false }
        shownPacedUntil = until
        recorder.setPacedUntil(until)
        return true
    }

    /// The quiet period a quota refusal asks for, started for the whole account: the window
    /// named in the answer until it starts afresh (at its calendar turn, as Open-Meteo's, or
    /// when the answer says, as Pirate Weather's month; `Retry-After` when later); a block that
    /// names none (OpenWeatherMap's), with the back-off's doubling waits. Logged here, once.
    /// Nil when `batch` asked an owner a reload has left since, or the feed was retired: the
    /// account keeps the refusal for a reload back, and this feed is not held.
    func beginQuietPeriod(
        after refusal: WeatherFetchError, of batch: QuotaReservation, now: Double, placesWaiting: Int
    ) -> QuietPeriod? {
        let asked = refusal.retryAfter.map { now + min($0, Backoff.longestRetryAfter) } ?? now
        var windowLift: Double?
        if case .quota(let window?) = refusal.cause {
            let turn =
                refusal.windowResetsAt.map { $0 + QuietPeriod.resetMargin } ?? QuietPeriod.lift(after: window, now: now)
            windowLift = max(turn, asked)
        }
        let retirement = retired.withLockedValue { $0 }
        guard account.isAsking(batch), retirement == nil else {
            // Kept for a reload back (also by the account of a feed a reload retired): until its
            // window starts afresh, or its Retry-After. A block that names neither (OpenWeatherMap's)
            // holds an account no feed spends now for the back-off's wait; one that another feed
            // goes on spending (the weather's, the air pollution gone to the free plan's account
            // of its own) is not held by it.
            var until = windowLift ?? asked
            if retirement?.leavesAccount == true, windowLift == nil {
                backoffState.recordFailure(now: now, retryAfter: refusal.retryAfter, jitter: jitter())
                until = backoffState.notBefore
            }
            guard until > now else { return nil }  // nothing to wait for
            _ = account.beginQuietPeriod(reason: refusal.message, until: until, refusing: batch)
            logger.info(
                "a server a reload left refuses for its quota; it is not asked before this lifts",
                metadata: [
                    "provider": "\(source.providerLabel)", "quota_owner": "\(batch.owner)",
                    "reason": "\(refusal.message)",
                    "until": "\(QuietPeriod.utcTime(until))",
                ])
            return nil
        }
        let until: Double
        if let windowLift {
            until = windowLift
            backoffState.hold(until: until)
        } else {
            backoffState.recordFailure(now: now, retryAfter: refusal.retryAfter, jitter: jitter())
            until = backoffState.notBefore
        }
        guard let period = account.beginQuietPeriod(reason: refusal.message, until: until, refusing: batch) else {
            return nil  // the owner changed just now
        }
        // A longer period in force (the day's, when a batch in flight comes back refused for the
        // minute) holds this feed until it lifts; it was logged when it began.
        guard period.until == until else {
            backoffState.hold(until: period.until)
            return period
        }
        logger.warning(
            "the provider refuses requests for its quota; none until it lifts",
            metadata: [
                "provider": "\(source.providerLabel)", "reason": "\(refusal.message)",
                "until": "\(QuietPeriod.utcTime(until))", "places_waiting": "\(placesWaiting)",
            ])
        return period
    }
}
