import CMalloc
import Dispatch
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A refresh's steps, all on the feed's queue: locate, then ask in batches the quota has room
/// for, record and render each, and finish with the back-off and the next refresh armed.
extension Feed {
    /// Starts a refresh of every place, or of the places named: locates them, then asks.
    /// `besideSchedule`: the places named were just looked up or added by a reload, and the
    /// refresh armed stays (`askBesideSchedule`).
    func begin(only names: Set<String>?, retryingNetwork: Bool, besideSchedule: Bool = false) {
        guard !isRetired else { return }  // another feed asks these places now
        idle.enter()
        defer { idle.leave() }
        let started = clock.now()
        let all = schedule.places
        // Places looked up while the last refresh ran are asked by the next one.
        let names = names.map { $0.union(lookedUpMeanwhile) }
        lookedUpMeanwhile = []
        var places = names.map { wanted in all.filter { wanted.contains($0.name) } } ?? all
        let coversEveryPlace = places.count == all.count
        if coversEveryPlace { lastStarted = started }
        let began = DispatchTime.now()
        // `city:` places are located first; one still being looked up is asked when the look-up
        // is over, and those that cannot be located wait while the others are fetched.
        let locations =
            locator?.locate(
                places, now: started, retryInterval: backoffState.interval, caller: ObjectIdentifier(self)
            ) { [weak self] name in
                guard let self else { return }
                self.queue.async { self.lookedUp(name) }
            } ?? places.map { .success($0) }
        // A place being looked up, or one the source does not ask once located (outside its
        // area), takes no part.
        let asked = places.indices.filter { index in
            guard let location = locations[index] else { return false }
            guard case .success(let place) = location else { return true }
            return source.asks(place)
        }
        let located = asked.compactMap { locations[$0] }
        places = asked.map { places[$0] }
        guard !places.isEmpty else {
            // Nothing to ask: the refresh armed stays, or the next one is armed.
            if !besideSchedule { arm(in: backoffState.nextRefresh(after: lastStarted) - started) }
            return
        }
        var run = RefreshRun<Report>(
            places: places, located: located, started: started, coversEveryPlace: coversEveryPlace)
        run.retriesNetwork = retryingNetwork
        run.besideSchedule = besideSchedule
        if besideSchedule, let deadline = timerDeadline {
            run.armedBefore = (deadline, armedOnly, armedForNetwork)
        } else {
            claimQuota(places: run.pending.count, from: started)  // the located places it asks
        }
        let unlocated = located.indices.filter { run.location(at: $0) == nil }
        if !unlocated.isEmpty {
            recorder.record(
                unlocated.compactMap { index in
                    run.outcomes[index].map { (place: places[index], location: nil, outcome: $0) }
                }, at: clock.now())
            logFailures(of: unlocated, in: run)
            run.hasUnrendered = true
        }
        run.busySeconds += Self.seconds(since: began)
        self.run = run
        step()
    }

    /// Asks the next batch of the refresh under way: as many places as the quota has room for
    /// now (all of them without a quota), records and renders what came back, then arms the
    /// next step, the quiet period's end, or the next refresh.
    func step() {
        guard running, !isRetired, var run else { return }
        idle.enter()
        defer { idle.leave() }
        var now = clock.now()
        if let quiet = account.quietPeriod, now < quiet.until {
            // A run that begins in a quiet period (kept over a restart, begun by another feed of
            // the account, or after a reload) waits for it like one the owner refused: its
            // places say so meanwhile, and it counts as started when the period lifts.
            if !run.waitsForQuietPeriod {
                run.waitsForQuietPeriod = true
                let waiting = WeatherFetchError(quiet.description, wasAsked: false)
                recorder.record(
                    run.pending.map {
                        (place: run.places[$0], location: run.location(at: $0), outcome: .failure(waiting))
                    }, at: now)
                show(quiet)
                recorder.render(now: now)
                self.run = run
            }
            armStep(in: quiet.until - now, claiming: run.pending.count)
            return
        }
        if account.liftQuietPeriod(at: now) != nil {
            logger.info(
                "quiet period over; asking the provider again",
                metadata: ["provider": "\(source.providerLabel)", "places_waiting": "\(run.pending.count)"])
        }
        show(nil)
        if run.waitsForQuietPeriod {
            run.waitsForQuietPeriod = false
            run.started = now
            if run.coversEveryPlace { lastStarted = now }
        }
        guard !run.pending.isEmpty else {
            // Nothing to fetch (no place could be located): the located failures go on the page.
            recorder.recordRefresh(seconds: run.busySeconds)
            recorder.render(now: now)
            armStaleTimer()
            return finish(run)
        }
        let cost = schedule.callsPerPlace
        let batch = reserveBatch(of: run, at: now)
        guard batch.places > 0 else {
            let paced = pacedUntil(run, now: now)
            if showPacing(paced) || run.hasUnrendered {
                run.hasUnrendered = false
                recorder.render(now: now)
            }
            return armNextBatch(of: run, pacedUntil: paced, now: now)
        }
        let began = DispatchTime.now()
        let taken = Array(run.pending.prefix(batch.places))
        run.pending.removeFirst(taken.count)
        let results = source.fetch(taken.compactMap { run.location(at: $0) }, logger: logger)
        now = clock.now()
        // Stamped when the answers are in, so the next batch leaves at least a window after
        // the owner counted this one. Places not asked, or whose request never reached the
        // API (or was cancelled by shutdown), cost nothing; a request the upstream answered with
        // an error costs what it counts for it (`WeatherFetchError.calls`), as
        // `cloudy_exporter_upstream_calls_total` has it.
        let spent = results.reduce(0.0) { sum, outcome in
            guard case .failure(let error) = outcome else { return sum + cost }
            guard error.wasAsked else { return sum }
            // What the source counted for the place when it knows (one of two requests reached
            // the API before the other failed); else nothing for a request that never reached it.
            if let calls = error.calls { return sum + calls }
            return error.cause == .network ? sum : sum + cost
        }
        account.settle(batch, spent: spent, at: now)
        // Stopped meanwhile (`stop` cancels the requests before the queue hears of it): what came
        // back is the shutdown, not the upstream's answer; nothing is recorded, shown or backed
        // off, but the requests answered before it stay spent.
        guard !client.isCancelled else {
            self.run = nil
            return
        }
        guard !isRetired else { return settleRetired(results, of: batch, now: now) }
        let refusal = Self.quotaRefusal(among: results)
        var refused: [Int] = []
        var answeredNow: [Int] = []
        // Another 429 (a rate limit, not the quota): the rest of the refresh is not asked.
        var rateLimit: WeatherFetchError?
        // The places as the schedule has them now (a reload may have moved or dropped some), by
        // name: looked up once per answer, not searched (1,000 places made that a million compares).
        let scheduled = Dictionary(schedule.places.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (offset, index) in taken.enumerated() {
            let outcome = offset < results.count ? results[offset] : .failure(WeatherFetchError("no answer"))
            if case .failure(let error) = outcome, case .quota = error.cause {
                refused.append(index)
            } else {
                if case .failure(let error) = outcome, error.isRateLimit, error.wasAsked { rateLimit = error }
                run.outcomes[index] = outcome
                answeredNow.append(index)
                if case .success = outcome, scheduled[run.places[index].name]?.isAskedAlike(run.places[index]) == true {
                    answered.insert(run.places[index].name)
                }
            }
        }
        if let rateLimit, refusal == nil {
            let skipped = rateLimit.notAsked("not asked: the provider asked to wait (\(rateLimit.message))")
            for index in run.pending { run.outcomes[index] = .failure(skipped) }
            answeredNow += run.pending
            run.pending = []
        }
        recorder.record(
            answeredNow.compactMap { index in
                run.outcomes[index].map { (place: run.places[index], location: run.location(at: index), outcome: $0) }
            }, at: now)
        logFailures(of: answeredNow, in: run)
        var quiet: QuietPeriod?
        if let refusal {
            run.pending = refused + run.pending
            // Nil for a server a reload left while the batch was out: it holds nothing here.
            quiet = beginQuietPeriod(after: refusal, of: batch, now: now, placesWaiting: run.pending.count)
        }
        if let refusal, let quiet {
            let waiting = WeatherFetchError(quiet.description, cause: refusal.cause, wasAsked: false)
            recorder.record(
                run.pending.map { (place: run.places[$0], location: run.location(at: $0), outcome: .failure(waiting)) },
                at: now)
            show(quiet)
            run.waitsForQuietPeriod = true
        }
        run.busySeconds += Self.seconds(since: began)
        run.hasUnrendered = false
        // The refresh's duration is on the page rendered when its last batch is in.
        if quiet == nil, run.pending.isEmpty { recorder.recordRefresh(seconds: run.busySeconds) }
        let paced = quiet == nil ? pacedUntil(run, now: now) : nil
        showPacing(paced)
        recorder.render(now: now)
        self.run = run
        armStaleTimer()
        if let quiet {
            armStep(in: quiet.until - now, claiming: run.pending.count)
        } else if run.pending.isEmpty {
            finish(run)
        } else {
            armNextBatch(of: run, pacedUntil: paced, now: now)
        }
    }

    /// Ends the refresh (its duration is already on the page): back-off, the log line, and the
    /// next refresh armed — soon when places that never had an answer failed for the network.
    private func finish(_ run: RefreshRun<Report>) {
        self.run = nil
        claimQuota(places: 0)
        let now = clock.now()
        // Decoding and rendering free megabytes at once; hand them back to the system so the
        // resident size reflects what the exporter keeps, not its peak.
        _ = malloc_trim(0)
        let outcomes = run.outcomes.map { $0 ?? .failure(WeatherFetchError("no answer")) }
        let failed = outcomes.filter { if case .failure = $0 { return true } else { return false } }.count
        // Only a refresh that failed for every place it fetched says the upstream is in trouble.
        let fetched = run.fetchedIndexes
        let upstreamFailures = fetched.compactMap { index -> WeatherFetchError? in
            guard case .failure(let error) = outcomes[index] else { return nil }
            return error
        }
        if !upstreamFailures.contains(where: { $0.cause == .badRequest }) { loggedBadRequests = [] }
        // Places not located because the geocoder could not be reached wait for the network too.
        let waitingIndexes = run.places.indices.filter { index in
            guard case .failure(let error) = outcomes[index], error.cause == .network else { return false }
            return !answered.contains(run.places[index].name)
        }
        let networkWaiting = waitingIndexes.map { run.places[$0].name }
        let fastRetry = Self.firstNetworkRetry * Double(1 << min(networkRetries, 30))
        if run.besideSchedule, let retryAfter = upstreamFailures.compactMap(\.retryAfter).max() {
            // Too little to back off for, but the upstream's own wait holds every request.
            backoffState.hold(retryAfter: retryAfter, now: now)
        }
        let regular = backoffState.nextRefresh(after: lastStarted)
        if run.besideSchedule, keepArmed(after: run, networkWaiting: networkWaiting, now: now) {
            // The refresh armed before stays; the back-off is not these few places' to move.
        } else if !networkWaiting.isEmpty, fastRetry < backoffState.interval, now + fastRetry < regular {
            networkRetries += 1
            // Places that could not be located wait for the geocoder, not for this upstream.
            let unreached = waitingIndexes.allSatisfy { run.location(at: $0) == nil } ? "geocoder" : "provider"
            logger.info(
                "no connection to the \(unreached) yet; retrying soon",
                metadata: [
                    "provider": "\(source.providerLabel)", "places": "\(networkWaiting.count)",
                    "next_attempt_in_seconds": "\(SampleValue.format(fastRetry))",
                ])
            let everyPlace = networkWaiting.count == schedule.places.count
            arm(in: fastRetry, only: everyPlace ? nil : Set(networkWaiting), retryingNetwork: true)
        } else {
            if networkWaiting.isEmpty { networkRetries = 0 }
            if run.besideSchedule {
                // Places asked beside the schedule (just looked up, or added by a reload) say
                // too little of the upstream to move its back-off.
            } else if !fetched.isEmpty, upstreamFailures.count == fetched.count {
                let retryAfter = upstreamFailures.compactMap(\.retryAfter).max()
                backoffState.recordFailure(now: now, retryAfter: retryAfter, jitter: jitter())
                logger.info(
                    "provider failing; backing off",
                    metadata: [
                        "provider": "\(source.providerLabel)", "consecutive_failures": "\(backoffState.failures)",
                        "next_attempt_in_seconds":
                            "\(SampleValue.format((backoffState.nextRefresh(after: now) - now).rounded()))",
                    ])
            } else {
                backoffState.recordSuccess()
                // A Retry-After holds the next refresh back even when other places were answered.
                if let retryAfter = upstreamFailures.compactMap(\.retryAfter).max() {
                    backoffState.hold(retryAfter: retryAfter, now: now)
                }
            }
            arm(in: backoffState.nextRefresh(after: lastStarted) - now)
        }
        logger.info(
            "refresh finished",
            metadata: [
                "places_ok": "\(run.places.count - failed)", "places_failed": "\(failed)",
                "duration_seconds": "\(SampleValue.format((run.busySeconds * 1000).rounded() / 1000))",
                "provider": "\(source.providerLabel)",
            ])
        if !lookedUpMeanwhile.isEmpty { askBesideSchedule(lookedUpMeanwhile) }
    }

    private static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
