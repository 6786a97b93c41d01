import Foundation

/// What a `QuotaAccount` knows, under its lock.
extension QuotaAccount {
    struct State {
        var provider: ProviderName
        var url: String
        /// The owner is asked with a key (`QuotaState.keyed`), and which (`QuotaState.key`).
        var keyed = false
        var key: String?
        /// The quota in force; pacing keeps each window within `RefreshPlan.margin` of it.
        var quota: Quota
        /// Where the ledger and a quiet period survive a restart; nil keeps them in memory only.
        var file: URL?
        var ledger = CallLedger()
        /// Calls of batches out now, not yet in the ledger (for every owner: pacing counts them all).
        var reserved = 0.0
        /// Of `reserved`, the calls of batches out for owners a reload left, by their entry in
        /// `left`: the file counts them for the owner they asked, not the one asked now, so a
        /// crash before their answers neither loses them for the first nor charges the second.
        var leftOut: [String: Double] = [:]
        /// When the latest batch out went.
        var reservedAt = 0.0
        /// Calls the feed with the first claim on the quota (the weather's) means to spend in the
        /// refresh due at `firstClaimFrom` (`QuotaAccount.claimFirst`).
        var firstClaim = 0.0
        var firstClaimFrom = 0.0
        /// What one place of the first claim costs: when its first batch can go.
        var firstClaimPerPlace = 0.0
        var quietPeriod: QuietPeriod?
        /// Why the last write of the file failed; nil when it worked (or none was tried).
        var saveFailure: String?
        /// The calls spent on, and the quiet period of, each owner a reload left (by provider
        /// and URL), or that the file kept from before a restart, so that a reload back finds
        /// them (kept in the file beside the owner's, `QuotaState.others`, for a restart back).
        var left: [String: QuotaState] = [:]

        var ownerID: String { QuotaState.ownerID(provider, url, keyed: keyed, key: key) }

        /// What the account knows of the owner `shares` names: its own owner's, or else the one
        /// a reload left that was refused longest (should two servers of the quota have been
        /// left). A keyed owner's is no other's.
        func kept(sharedWith shares: (ProviderName, String) -> Bool) -> QuotaState? {
            if !keyed, shares(provider, url) {
                return QuotaState(
                    provider: provider, url: url, ledger: ownLedger(at: reservedAt), quietPeriod: quietPeriod,
                    keyed: false)
            }
            // Without their batches out: those calls reach an account linked now when they settle.
            return left.values.filter { !$0.isKeyed && shares($0.provider, $0.url) }
                .max { ($0.quietPeriod?.until ?? 0, $0.ownerID) < ($1.quietPeriod?.until ?? 0, $1.ownerID) }
        }

        var pacingQuota: Quota { Quota(limits: quota.limits.mapValues { $0 * RefreshPlan.margin }) }

        /// The first claim a feed that yields counts at `time`: from `claimLead` before its
        /// refresh is due (a batch just before it would spend the window it goes in).
        func claim(yielding: Bool, at time: Double) -> Double {
            yielding && time >= firstClaimFrom - QuotaAccount.claimLead ? firstClaim : 0
        }
        /// Calls counted as spent at `time` beside the ledger: the batches out, and for a feed
        /// that yields, the first claim.
        func out(yielding: Bool, at time: Double) -> Double { reserved + claim(yielding: yielding, at: time) }
        /// The ledger with the batches out (and for a feed that yields, the first claim) counted
        /// as spent at `time`.
        func ledgerWithBatchesOut(at time: Double, yielding: Bool = false) -> CallLedger {
            var ledger = self.ledger
            let out = out(yielding: yielding, at: time)
            if out > 0 { ledger.record(out, at: time, keeping: horizon) }
            return ledger
        }
        /// Calls of batches out for the owner asked now.
        var ownOut: Double { max(0, reserved - leftOut.values.reduce(0, +)) }
        /// The owner's ledger with its own batches out counted as spent at `time`: what the
        /// file and an account taking the quota over count (pacing counts every batch out,
        /// `ledgerWithBatchesOut`).
        func ownLedger(at time: Double) -> CallLedger {
            var ledger = self.ledger
            ledger.record(ownOut, at: time, keeping: horizon)
            return ledger
        }
        /// The owners a reload left, each with its batches out counted as spent at `time` (or
        /// its latest call, when later).
        func leftWithBatchesOut(at time: Double) -> [String: QuotaState] {
            left.reduce(into: [:]) { result, entry in
                var state = entry.value
                if let out = leftOut[entry.key] {
                    let at = max(time, state.ledger.entries.last?.time ?? 0)
                    state.ledger.record(out, at: at, keeping: QuotaWindow.month.seconds)
                }
                result[entry.key] = state
            }
        }
        /// Whether `batch` asked the owner the account has now, however either URL is spelt.
        func owns(_ batch: QuotaReservation) -> Bool {
            batch.provider == provider && ProviderSettings.isSameServer(batch.url, url) && batch.keyed == keyed
                && batch.key == key
        }
        /// Where what a reload left of `provider` at `url`'s server (with a key or without, and
        /// which) is kept, however the URL was spelt; nil when nothing is.
        func leftKey(_ provider: ProviderName, _ url: String, keyed: Bool, key: String?) -> String? {
            left.first(where: { $0.value.isFor(provider, url: url, keyed: keyed, key: key) })?.key
        }
        /// Where what `batch` spent and a refusal it brought back are kept when a reload left its
        /// owner: the entry of that server however it was spelt, or a new one.
        func leftKey(of batch: QuotaReservation) -> String {
            leftKey(batch.provider, batch.url, keyed: batch.keyed, key: batch.key) ?? batch.ownerID
        }
        /// Takes out what a reload left of `provider` at `url`'s server, however the URL was spelt,
        /// for the owner asked now: its batches out are that owner's again.
        mutating func takeLeft(_ provider: ProviderName, _ url: String, keyed: Bool, key: String?) -> QuotaState? {
            guard let found = leftKey(provider, url, keyed: keyed, key: key) else { return nil }
            leftOut[found] = nil
            return left.removeValue(forKey: found)
        }
        /// Files the owner asked now among those a reload left, with its batches out.
        mutating func leave() {
            let out = ownOut
            left[ownerID] = QuotaState(
                provider: provider, url: url, ledger: ledger, quietPeriod: quietPeriod, keyed: keyed, key: key)
            if out > 0 { leftOut[ownerID, default: 0] += out }
        }
        /// Settles `calls` of a batch out for the owner a reload left at `key`; returns whether
        /// the file counted them.
        mutating func settleLeftOut(_ calls: Double, at key: String) -> Bool {
            guard let out = leftOut[key] else { return false }
            leftOut[key] = out - calls < 1e-9 ? nil : out - calls
            return true
        }
        /// Takes in what another account knew of this owner's quota (`QuotaAccount.absorb`): the
        /// ledger with more calls over the longest window, and the refusal that lasts longer.
        /// Returns the quiet period it began, if it did.
        mutating func takeIn(_ other: QuotaState, upstream: String?) -> QuietPeriod? {
            let now = max(ledger.entries.last?.time ?? 0, other.ledger.entries.last?.time ?? 0)
            let longest = max(horizon, QuotaWindow.day.seconds)
            if other.ledger.spent(inLast: longest, at: now) > ledger.spent(inLast: longest, at: now) {
                ledger = other.ledger
            }
            guard let refused = other.quietPeriod, refused.until > (quietPeriod?.until ?? 0) else { return nil }
            quietPeriod = QuietPeriod(
                provider: provider, reason: refused.reason, until: refused.until, upstream: upstream)
            return quietPeriod
        }
        /// What the file keeps of the owners a reload left (`QuotaState.others`): those that
        /// still say something at the latest time the account knows of (`latestTime`), their
        /// batches out counted as spent, refusals in force first, then the latest spent, at most
        /// `maxOthersKept`. Those that say nothing and have no batch out are let go here too.
        mutating func othersKept() -> [QuotaState]? {
            let now = latestTime
            if now > 0 { left = left.filter { leftOut[$0.key] != nil || $0.value.saysSomething(at: now) } }
            func rank(_ state: QuotaState) -> (Double, Double, String) {
                let until = state.quietPeriod?.until ?? 0
                return (until > now ? until : 0, state.ledger.entries.last?.time ?? 0, state.ownerID)
            }
            let kept = leftWithBatchesOut(at: now).values.sorted { rank($0) > rank($1) }
            return kept.isEmpty ? nil : Array(kept.prefix(QuotaAccount.maxOthersKept))
        }
        /// The latest time the account has read from the clock: its latest batch, or the latest
        /// call settled since (0 before either).
        var latestTime: Double { max(reservedAt, ledger.entries.last?.time ?? 0) }
        /// Takes what accounts a reload left know of their owners (`QuotaAccount.keptStates`) as
        /// owners left here: of one known already, the ledger spent last and the longer refusal.
        /// What one knows of this account's own owner is taken in (`takeIn`); returns the quiet
        /// period that began, if one did.
        mutating func remember(_ others: [QuotaState], upstream: String?) -> QuietPeriod? {
            var began: QuietPeriod?
            for other in others {
                var merged = other
                merged.others = nil
                guard !other.isFor(provider, url: url, keyed: keyed, key: key) else {
                    began = takeIn(merged, upstream: upstream) ?? began
                    continue
                }
                let key = leftKey(other.provider, other.url, keyed: other.isKeyed, key: other.key) ?? other.ownerID
                if let known = left[key] {
                    if (known.ledger.entries.last?.time ?? 0) > (merged.ledger.entries.last?.time ?? 0) {
                        merged.ledger = known.ledger
                    }
                    if let quiet = known.quietPeriod, quiet.until > (merged.quietPeriod?.until ?? 0) {
                        merged.quietPeriod = quiet
                    }
                }
                left[key] = merged
            }
            return began
        }
        /// How long the ledger keeps calls: the longest window limited.
        var horizon: Double { quota.limits.keys.map(\.seconds).max() ?? 0 }
    }
}
