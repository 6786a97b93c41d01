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

    /// Asks places just looked up at once, unless a back-off, a `Retry-After` or a quiet period
    /// holds every request back, or a refresh of every place is due anyway: then the refresh
    /// armed asks them. A refresh armed for some places (a reload's) or a fast network retry is
    /// brought forward to ask them too, without doubling the fast retry's next wait.
    func askLookedUp(_ names: Set<String>) {
        let now = clock.now()
        let held = now < backoffState.notBefore || (account.quietPeriod?.until ?? 0) > now
        if armedOnly != nil || armedForNetwork {
            let due = (timerDeadline ?? now) - now
            arm(
                in: held ? due : 0, only: armedOnly.map { $0.union(names) }, retryingNetwork: armedForNetwork,
                afterLookUp: !held)
            lookedUpMeanwhile = []
        } else if held || (timerDeadline ?? .infinity) <= now {
            lookedUpMeanwhile = []
        } else {
            begin(only: names, retryingNetwork: false, afterLookUp: true)
        }
    }
}
