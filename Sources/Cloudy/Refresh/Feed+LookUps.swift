/// Places whose `city:` look-up ended after the refresh that wanted them went on without them
/// (`PlaceLocator`): asked as soon as the upstream may be asked, not at the next refresh.
extension Feed {
    /// A `city:` place's look-up is over, found or failed: the place is asked now rather than
    /// at the next refresh, or after the refresh under way (paced, or waiting for a quiet period).
    func lookedUp(_ name: String) {
        guard running, schedule.places.contains(where: { $0.name == name }) else { return }
        if run != nil {
            lookedUpMeanwhile.insert(name)
        } else {
            askLookedUp([name])
        }
    }

    /// Asks places just looked up when the upstream may be asked: with the refresh armed for some
    /// places (a fast retry, a reload's) when that is due, else at once, unless a back-off, a
    /// `Retry-After` or a quiet period holds every request back, or a refresh of every place is
    /// due anyway.
    func askLookedUp(_ names: Set<String>) {
        let now = clock.now()
        if let armed = armedOnly {
            arm(in: (timerDeadline ?? now) - now, only: armed.union(names), retryingNetwork: armedForNetwork)
            lookedUpMeanwhile = []
        } else if now < backoffState.notBefore || (timerDeadline ?? .infinity) <= now
            || (account.quietPeriod?.until ?? 0) > now
        {
            lookedUpMeanwhile = []
        } else {
            begin(only: names, retryingNetwork: false, afterLookUp: true)
        }
    }
}
