/// A batch's way through a `QuotaAccount`: room reserved before it goes, settled with what the
/// owner counted when its answers are in.
extension QuotaAccount {
    /// Reserves room for up to `places` places costing `callsPerPlace` each at `now`: as many as
    /// fit every window with what was spent and what is out now (all of them without a quota),
    /// for the owner the account has now. The batch settles them with `settle`. A feed that
    /// `yielding` counts the first claim as spent too (`claimFirst`).
    public func reserve(
        upTo places: Int, callsPerPlace: Double, at now: Double, yielding: Bool = false
    ) -> QuotaReservation {
        state.withLockedValue { state in
            var fit = state.ledger.affordablePlaces(callsPerPlace: callsPerPlace, quota: state.pacingQuota, at: now)
            if state.out(yielding: yielding, at: now) > 0, !state.quota.limits.isEmpty {
                // Another feed's batch is out, or the places of the first claim wait: they count
                // as spent now, and no place goes alone.
                let withOut = state.ledgerWithBatchesOut(at: now, yielding: yielding)
                let cost = max(callsPerPlace, 1e-9)
                let roomy = state.pacingQuota.limits.allSatisfy { window, limit in
                    limit - withOut.spent(inLast: window.seconds, at: now) + 1e-9 >= cost
                }
                fit =
                    roomy
                    ? withOut.affordablePlaces(callsPerPlace: callsPerPlace, quota: state.pacingQuota, at: now) : 0
            }
            let taken = min(fit, places)
            if !state.quota.limits.isEmpty, taken > 0 {
                state.reserved += Double(taken) * callsPerPlace
                state.reservedAt = now
                save(&state)
            }
            return QuotaReservation(
                places: taken, callsPerPlace: callsPerPlace, provider: state.provider, url: state.url,
                keyed: state.keyed, key: state.key)
        }
    }

    /// Settles a batch's reserved places: their owner counted `spent` calls for them, as of `now`
    /// (when its answers are in; 0 for requests that never reached it). An owner a reload left
    /// while the batch was out keeps them (the batch asked it), not the one asked now, and so
    /// does a linked account asking that owner now.
    public func settle(_ batch: QuotaReservation, spent: Double, at now: Double) {
        let linked = state.withLockedValue { state -> [QuotaAccount] in
            // Whatever the quota is now: a reload may have dropped it while the batch was out.
            if state.reserved > 0 {
                // Fractional weights settled in another order than reserved leave binary residue
                // (4e-16), which would count as a batch still out.
                let left = state.reserved - Double(batch.places) * batch.callsPerPlace
                state.reserved = left < 1e-9 ? 0 : left
            }
            guard state.owns(batch) else {
                let key = state.leftKey(of: batch)
                let counted = state.settleLeftOut(Double(batch.places) * batch.callsPerPlace, at: key)
                state.left[key, default: batch.emptyState].ledger.record(
                    spent, at: now, keeping: QuotaWindow.month.seconds)
                if spent > 0 || counted { save(&state) }
                // Taken under this lock, so that an account linked meanwhile has either the
                // calls in what it carried over or them forwarded, never both or neither.
                return linkedAccounts(asking: batch)
            }
            state.ledger.record(spent, at: now, keeping: state.horizon)
            if !state.quota.limits.isEmpty { save(&state) }
            return []
        }
        for account in linked { account.settle(account.askingNow, spent: spent, at: now) }
    }

    /// Whether `batch` asked the owner the account has now (not one a reload left meanwhile).
    public func isAsking(_ batch: QuotaReservation) -> Bool {
        state.withLockedValue { $0.owns(batch) }
    }

    /// The owner the account asks now, with no places reserved: what a batch that asked the same
    /// quota through another account is filed as here.
    var askingNow: QuotaReservation {
        state.withLockedValue { .asking($0.provider, $0.url, keyed: $0.keyed, key: $0.key) }
    }

    /// The earliest moment from `now` on when a place costing `callsPerPlace` fits: `now`
    /// itself, or when a past batch leaves a window. A batch still out counts as spent now, and
    /// for a feed that is `yielding`, the first claim; but the claim ends when the weather's
    /// first batch goes, not when it leaves a window (a day's, when the day is nearly spent), so
    /// a feed that waits for it alone looks again `claimRecheck` after that batch can go.
    public func nextRoom(callsPerPlace: Double, after now: Double, yielding: Bool = false) -> Double {
        state.withLockedValue { state in
            let room = state.ledgerWithBatchesOut(at: now, yielding: yielding).nextRoom(
                callsPerPlace: callsPerPlace, quota: state.pacingQuota, after: now)
            guard state.claim(yielding: yielding, at: now) > 0 else { return room }
            let besideTheClaim = state.ledgerWithBatchesOut(at: now)
            let roomBesideTheClaim = besideTheClaim.nextRoom(
                callsPerPlace: callsPerPlace, quota: state.pacingQuota, after: now)
            let weatherGoes = besideTheClaim.nextRoom(
                callsPerPlace: state.firstClaimPerPlace, quota: state.pacingQuota, after: max(now, state.firstClaimFrom)
            )
            return min(room, max(roomBesideTheClaim, weatherGoes + Self.claimRecheck))
        }
    }

    /// How long after the weather's first batch can go a feed held by the claim alone looks
    /// again: by then the weather has reserved that batch and given the claim up.
    static var claimRecheck: Double { 10 }

    /// How long before the weather's refresh is due its claim holds the other feeds: a window's
    /// worth of Open-Meteo's shortest (a minute), so a batch just before does not take its room.
    static var claimLead: Double { 60 }

    /// Claims the quota first for `places` places costing `callsPerPlace` each (0 places: none):
    /// what the weather's refresh due at `from` means to spend, until its first batch is
    /// reserved. The other feeds of the account yield to it (`reserve(yielding:)`): from
    /// `claimLead` before `from` they count it as spent, so an air-quality batch whose timer fires
    /// first, or just before, does not take the room of the window the forecast's first batch
    /// goes in, and the forecast (and `/readyz`) is not held a window for it. A paced refresh
    /// claims nothing for its later batches: there the feed whose timer fires first when a
    /// window frees takes its room.
    public func claimFirst(places: Int, callsPerPlace: Double, from: Double = 0) {
        state.withLockedValue { state in
            state.firstClaim = Double(max(0, places)) * callsPerPlace
            state.firstClaimPerPlace = callsPerPlace
            state.firstClaimFrom = from
        }
    }
}
