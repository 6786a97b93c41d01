/// Places asked at once, beside the schedule: those whose `city:` look-up ended after the refresh
/// that wanted them went on without them (`PlaceLocator`), and those a reload added or moved.
/// They are asked as soon as the upstream may be asked, in a refresh of their own, and the
/// refresh armed for the others stays as it was.
extension Feed {
    /// A `city:` place's look-up is over, found or failed: the place is asked now rather than
    /// at the next refresh, or after the refresh under way (paced, or waiting for a quiet period).
    /// Look-ups that end together are asked together: the places whose news is on the queue
    /// before the first is handled go in one refresh.
    func lookedUp(_ name: String) {
        guard running, schedule.places.contains(where: { $0.name == name }) else { return }
        lookedUpMeanwhile.insert(name)
        guard run == nil, !askingLookedUp else { return }
        askingLookedUp = true
        queue.async {
            self.askingLookedUp = false
            guard self.running, self.run == nil, !self.lookedUpMeanwhile.isEmpty else { return }
            self.askBesideSchedule(self.lookedUpMeanwhile)
        }
    }

    /// Asks places (just looked up, or added by a reload) at once, in a refresh of their own that
    /// leaves the refresh armed (`RefreshRun.armedBefore`) as it was. Unless a back-off, a
    /// `Retry-After` or a quiet period holds every request back, or a refresh of every place is
    /// due anyway: then the refresh armed asks them (one armed for some places takes them in, as
    /// does one armed for some places that is due: a second reload before the first one's refresh).
    func askBesideSchedule(_ names: Set<String>) {
        let now = clock.now()
        let due = (timerDeadline ?? .infinity) <= now
        if now < backoffState.notBefore || (account.quietPeriod?.until ?? 0) > now || (due && armedOnly != nil) {
            if let armed = armedOnly {
                arm(in: (timerDeadline ?? now) - now, only: armed.union(names), retryingNetwork: armedForNetwork)
            }
            lookedUpMeanwhile = []
        } else if armedOnly == nil, !armedForNetwork, due {
            lookedUpMeanwhile = []
        } else {
            begin(only: names, retryingNetwork: false, besideSchedule: true)
        }
    }

    /// Ends a refresh beside the schedule: the refresh armed before it stays, and takes in
    /// those of its places still waiting for the network when it is a fast retry or a refresh of
    /// some places. Returns false when there is none to keep, or it is a refresh of every place
    /// on the schedule while some places wait for the network: `finish` then arms as usual.
    func keepArmed(after run: RefreshRun<Report>, networkWaiting: [String], now: Double) -> Bool {
        guard let before = run.armedBefore, before.network || before.only != nil || networkWaiting.isEmpty else {
            return false
        }
        arm(
            in: max(before.deadline, backoffState.notBefore) - now, only: before.only.map { $0.union(networkWaiting) },
            retryingNetwork: before.network)
        return true
    }
}
