import NIOConcurrencyHelpers

/// The feeds of one `QuotaAccount` hear of each other's quiet periods as they begin.
extension QuotaAccount {
    /// Calls `notify` with `owner` (on the refused feed's queue, or a linked account's feed's:
    /// `QuotaAccount.linkedAccount`) whenever a feed of the account begins a quiet period, so the
    /// other feeds' places can say so before their own next step.
    /// It must not block. The account holds `owner` weakly and forgets `notify` once it is gone.
    public func observeQuietPeriods<Owner: AnyObject & Sendable>(
        for owner: Owner, _ notify: @escaping @Sendable (Owner, QuietPeriod) -> Void
    ) {
        let observer = QuietPeriodObserver(owner: owner) { [weak owner] period in
            if let owner { notify(owner, period) }
        }
        quietPeriodObservers.withLockedValue { observers in
            observers.removeAll { $0.owner == nil }
            observers.append(observer)
        }
    }

    /// Tells every feed of the account that `period` began.
    func tell(_ period: QuietPeriod) {
        // Each observer only queues work of its own: it is called under this lock.
        quietPeriodObservers.withLockedValue { observers in
            observers.removeAll { $0.owner == nil }
            for observer in observers { observer.notify(period) }
        }
    }

    /// How many observers the account holds: the feeds of it that are still alive, and any gone
    /// since the last quiet period or observer.
    var quietPeriodObserverCount: Int { quietPeriodObservers.withLockedValue { $0.count } }
}

/// One owner of `QuotaAccount.observeQuietPeriods`, held weakly so that a feed a reload replaced
/// is let go.
struct QuietPeriodObserver: Sendable {
    weak var owner: (AnyObject & Sendable)?
    let notify: @Sendable (QuietPeriod) -> Void
}
