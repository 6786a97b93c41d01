/// A reload's config, applied to the look-ups (`Geocoder.update`).
extension Geocoder {
    /// Applies a config (at start and after a reload): the geocoder's URL, `refresh.timeout`,
    /// and the `city:` places configured. Look-ups queued for a place no longer configured, or
    /// searched for otherwise, are dropped, and what one under way for it finds is not kept
    /// (nor logged). Another URL is another geocoder: failures at the old one no longer hold a
    /// place back, and the look-ups under way there are asked again at the new one.
    func update(url: String, timeout: Double, places: [Place]) {
        limit.withLockedValue { $0 = timeout }
        let moved = base.withLockedValue { base in
            defer { base = url }
            return base != url
        }
        lock.withLock {
            var wanted: [String: CitySearch] = [:]
            for place in places { if let search = place.city { wanted[place.name] = search } }
            self.wanted = wanted
            queued.removeAll { wanted[$0.name] != $0.search }
            underWay = underWay.filter { wanted[$0.key] == $0.value.search }
            failures = failures.filter { wanted[$0.key] == $0.value.search }
            guard moved else { return }
            generation += 1
            failures = [:]
            heldUntil = 0
            heldBack = []
            holdEnd?.cancel()
            holdEnd = nil
            let queuedNames = Set(queued.map(\.name))
            for index in queued.indices { queued[index].generation = generation }
            for name in underWay.keys { underWay[name]?.generation = generation }
            queued += underWay.values.filter { !queuedNames.contains($0.name) }
            // The places the old geocoder did not find are asked of the new one now, not at
            // their feeds' next refresh.
            for (name, search) in wanted where underWay[name] == nil && found[name]?.search != search {
                let lookUp = LookUp(name: name, search: search, retryInterval: 0, generation: generation)
                underWay[name] = lookUp
                queued.append(lookUp)
            }
        }
        startLanes()
    }
}
