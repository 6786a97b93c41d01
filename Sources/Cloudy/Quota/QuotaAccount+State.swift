/// What a `QuotaAccount` knows, under its lock.
extension QuotaAccount {
    struct State {
        var provider: ProviderName
        var url: String
        /// The quota in force; pacing keeps each window within `RefreshPlan.margin` of it.
        var quota: Quota
        var ledger = CallLedger()
        /// Calls of batches out now, not yet in the ledger.
        var reserved = 0.0
        /// When the latest batch out went.
        var reservedAt = 0.0
        var quietPeriod: QuietPeriod?
        /// Why the last write of the file failed; nil when it worked (or none was tried).
        var saveFailure: String?
        /// The calls spent on, and the quiet period of, each owner a reload left (by provider
        /// and URL), or that the file kept from before a restart, so that a reload back finds
        /// them (kept in memory only).
        var left: [String: QuotaState] = [:]

        var owner: String { QuotaState.owner(provider, url) }

        var pacingQuota: Quota { Quota(limits: quota.limits.mapValues { $0 * RefreshPlan.margin }) }

        /// The ledger with the batches out counted as spent at `time`.
        func ledgerWithBatchesOut(at time: Double) -> CallLedger {
            var ledger = self.ledger
            if reserved > 0 { ledger.record(reserved, at: time, keeping: horizon) }
            return ledger
        }
        /// Takes out what a reload left of `provider` at `url`'s server, however the URL was spelt.
        mutating func takeLeft(_ provider: ProviderName, _ url: String) -> QuotaState? {
            guard let key = left.first(where: { $0.value.isFor(provider, url: url) })?.key else { return nil }
            return left.removeValue(forKey: key)
        }
        /// How long the ledger keeps calls: the longest window limited.
        var horizon: Double { quota.limits.keys.map(\.seconds).max() ?? 0 }
    }
}
