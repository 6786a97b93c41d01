import Foundation
import Logging
import NIOConcurrencyHelpers

/// One quota as its owner counts it, and everything this process spends against it: the calls
/// spent (`CallLedger`), the batches in flight, the quiet period after a refusal, and
/// `<storage.path>/quota.json` that keeps them over a restart (`QuotaState`). Every feed that
/// spends the quota (Open-Meteo's forecast and air-quality hosts share one free limit per
/// client) asks the same account before each batch, so together they pace within 90 % of each
/// window (`RefreshPlan.margin`) and a refusal one of them gets quiets them all.
///
/// Feeds run on queues of their own, so the account is locked; a batch's places are reserved
/// when it goes out and settled with what the owner counted when its answers are in, so two
/// feeds never both spend the room that is left.
public final class QuotaAccount: Sendable {
    let state: NIOLockedValueBox<State>
    /// Told of each quiet period as it begins; one whose owner is gone (a feed a reload replaced)
    /// is dropped at the next period or the next observer, whichever comes first.
    let quietPeriodObservers = NIOLockedValueBox<[QuietPeriodObserver]>([])
    /// Other feeds' accounts that count the same quota as an owner of this one (`linkedAccount`).
    let linked = NIOLockedValueBox<[LinkedAccount]>([])
    private let upstream: String?
    private let logger: Logger

    /// The account of `provider` at `url` under `quota`. With a `file`, what the owner counted
    /// before a restart still counts, and a refusal still in force holds (what the file keeps for
    /// other owners is held for a reload back, and written again with this owner's, while it
    /// still says something). `carried`: what another account
    /// knows of the same quota (`kept(sharedWith:)`), for an account that takes it over.
    /// `upstream` names who a quiet period holds back when it is not the provider's own API
    /// (`QuotaState.upstream`); `keyed`, that the owner is asked with a key (`QuotaState.keyed`),
    /// and `key`, which (`QuotaState.key`).
    public init(
        provider: ProviderName, upstream: String? = nil, url: String, quota: Quota, file: URL?, now: Double,
        logger: Logger, carried: QuotaState? = nil, keyed: Bool = false, key: String? = nil
    ) {
        self.logger = logger
        self.upstream = upstream
        var initial = State(provider: provider, url: url, keyed: keyed, key: key, quota: quota, file: file)
        let fromFile = file.flatMap { QuotaState.read(from: $0, logger: logger, settingAside: true) }
        // A refusal kept elsewhere holds no longer than its owner's longest (an edited file).
        func stillInForce(_ quiet: QuietPeriod?, of owner: ProviderName = provider) -> QuietPeriod? {
            guard var quiet, quiet.until > now else { return nil }
            quiet.until = min(quiet.until, QuietPeriod.latestLift(of: owner, now: now))
            quiet.upstream = owner == provider ? upstream : quiet.upstream
            return quiet
        }
        // The file's owner, then those a reload left before it was written (a config rolled
        // back over a restart finds its own among them).
        let owners = fromFile.map { [$0] + ($0.others ?? []) } ?? []
        // One that says it was kept with this key (or none) before one an older Cloudy wrote,
        // which counts for any; another that counts for this owner too is not held apart.
        let matches = owners.indices.filter { owners[$0].isFor(provider, url: url, keyed: keyed, key: key) }
        let mine = matches.first { owners[$0].keyed == keyed && owners[$0].key == key } ?? matches.first
        for (index, kept) in owners.enumerated() where !matches.contains(index) {
            let held = QuotaState(
                provider: kept.provider, url: kept.url, ledger: kept.ledger,
                quietPeriod: stillInForce(kept.quietPeriod, of: kept.provider), keyed: kept.keyed, key: kept.key)
            if held.saysSomething(at: now) { initial.left[kept.ownerID] = held }
        }
        if let file, let kept = fromFile, mine == nil {
            kept.logStartingAfresh(for: provider, url: url, keyed: keyed, key: key, file: file, logger: logger)
        } else if let kept = mine.map({ owners[$0] }) {
            initial.ledger = kept.ledger
            initial.quietPeriod = stillInForce(kept.quietPeriod)
            let lastDay = CallCost.rounded(kept.ledger.spent(inLast: 86400, at: now))
            logger.info(
                "calls spent before the restart still count",
                metadata: [
                    "provider": "\(upstream ?? provider.rawValue)", "calls_last_day": "\(SampleValue.format(lastDay))",
                    "quiet_until": "\(initial.quietPeriod.map { QuietPeriod.utcTime($0.until) } ?? "none")",
                ])
        }
        if var carried {
            // What another account knows of the same quota: the more calls, the longer refusal.
            carried.quietPeriod = stillInForce(carried.quietPeriod)
            _ = initial.takeIn(carried, upstream: upstream)
        }
        state = NIOLockedValueBox(initial)
    }

    /// What this account knows of the owner `shares` names (given a provider and URL): its own
    /// owner's, or one a reload left. A feed that leaves the account for one of its own on the
    /// same quota (the air quality on Open-Meteo's public host, the forecast moved to a mirror)
    /// carries it over, so a refusal for the day still holds there. An owner asked with a key
    /// (the commercial API) shares its quota with no one.
    public func kept(sharedWith shares: (ProviderName, String) -> Bool) -> QuotaState? {
        state.withLockedValue { $0.kept(sharedWith: shares) }
    }

    /// The owner's refusal in force (or lifted but not yet noticed by a feed).
    public var quietPeriod: QuietPeriod? { state.withLockedValue { $0.quietPeriod } }

    /// The ledger as it stands.
    var ledger: CallLedger { state.withLockedValue { $0.ledger } }

    /// Calls spent in the `seconds` up to `now`, by every feed of the account.
    public func spent(inLast seconds: Double, at now: Double) -> Double {
        state.withLockedValue { $0.ledger.spent(inLast: seconds, at: now) }
    }

    /// Applies a reloaded config: the quota in force, and the owner. Calls spent and a quiet
    /// period belong to the owner that was asked: they stay while it stays the same; another
    /// one starts afresh, or where it was left when a reload went back to it (a mirror tried
    /// while the public host refused for its day). A URL respelled for the same server (a path,
    /// `localhost` for `127.0.0.1`) is the same owner: its refusals and back-off still hold. A
    /// key added or removed (`keyed`) is another owner: the key's quota is not the free one; so
    /// is another key (`key`, its fingerprint): a Dark Sky key's month is not another key's.
    /// What a linked account asking the new owner's quota knows of it (the air quality alone on
    /// the server the forecast moves to) is taken in at once, before the forecast asks it, unless
    /// the new owner is asked with a key (`keyed`: the key's quota is another).
    /// Returns whether the owner changed.
    @discardableResult
    public func update(provider: ProviderName, url: String, quota: Quota, keyed: Bool = false, key: String? = nil)
        -> Bool
    {
        let asking = QuotaReservation.asking(provider, url, keyed: keyed, key: key)
        let known = linkedAccounts(asking: asking).compactMap { $0.kept { _, _ in true } }
        return state.withLockedValue { state in
            state.quota = quota
            guard !state.owns(asking) else { return false }
            // An older spelling of the same server.
            _ = state.takeLeft(state.provider, state.url, keyed: state.keyed, key: state.key)
            state.leave()
            state.provider = provider
            state.url = url
            state.keyed = keyed
            state.key = key
            let back = state.takeLeft(provider, url, keyed: keyed, key: key)
            state.ledger = back?.ledger ?? CallLedger()
            state.quietPeriod = back?.quietPeriod
            for other in known { _ = state.takeIn(other, upstream: upstream) }
            save(&state)
            return true
        }
    }

    /// Takes in what an account of its own knew of this owner's quota, when a feed joins this
    /// account on the server it asked alone (the air quality on the server the forecast moved
    /// to): its calls spent, and its refusal when that lasts longer than one in force here.
    /// That account started with what this one knew of the quota (`kept(sharedWith:)`), so its
    /// ledger holds those calls too: the one with more calls over the longest window is kept,
    /// never both added (which would count the calls carried over twice).
    public func absorb(_ other: QuotaState) {
        let quiet = state.withLockedValue { state -> QuietPeriod? in
            defer { save(&state) }
            return state.takeIn(other, upstream: upstream)
        }
        if let quiet { tell(quiet) }
    }

    /// Starts a quiet period after the owner refused for its quota: nothing goes to it from any
    /// feed of the account until `until`. A refusal for a shorter window (a batch that was in
    /// flight, refused for the minute) does not end a longer period in force (the day's): that
    /// one is returned. The refusal of an owner a reload left while `batch` was out is kept for
    /// a reload back, and holds nothing here now (nil); a linked account asking that owner now
    /// begins it.
    public func beginQuietPeriod(reason: String, until: Double, refusing batch: QuotaReservation) -> QuietPeriod? {
        var linked: [QuotaAccount] = []
        let period = state.withLockedValue { state -> QuietPeriod? in
            guard state.owns(batch) else {
                linked = linkedAccounts(asking: batch)  // under this lock, as `settle` takes them
                let key = state.leftKey(of: batch)
                if (state.left[key]?.quietPeriod?.until ?? 0) < until {
                    state.left[key, default: batch.emptyState].quietPeriod = QuietPeriod(
                        provider: batch.provider, reason: reason, until: until)
                    save(&state)  // for a restart on a config rolled back to that owner
                }
                return nil
            }
            if let longer = state.quietPeriod, longer.until > until { return longer }
            let period = QuietPeriod(provider: state.provider, reason: reason, until: until, upstream: upstream)
            state.quietPeriod = period
            save(&state)
            return period
        }
        guard let period else {  // the owner left
            for account in linked {
                _ = account.beginQuietPeriod(reason: reason, until: until, refusing: account.askingNow)
            }
            return nil
        }
        tell(period)
        return period
    }

    /// Ends the quiet period when it is over at `now`; returns it when this call ended it (the
    /// feed that does says so in the log), nil when there was none or it still holds.
    public func liftQuietPeriod(at now: Double) -> QuietPeriod? {
        state.withLockedValue { state -> QuietPeriod? in
            guard let quiet = state.quietPeriod, now >= quiet.until else { return nil }
            state.quietPeriod = nil
            save(&state)
            return quiet
        }
    }

    /// Keeps the ledger and the quiet period in `file` for the next start (and what it knows of
    /// the owners a reload left, `QuotaState.others`), with the batches out
    /// counted as spent: a crash before their answers (a crash loop) must not spend them again.
    /// Called under the lock, so the file always ends with the latest state when two feeds write
    /// at once. A failure is a warning when it starts or its reason changes, not on each of the
    /// two writes of every batch; writing again after it is said once too.
    func save(_ state: inout State) {
        guard let file = state.file else { return }
        // Not before the latest call settled since: the ledger reads an earlier time as a clock
        // set back.
        let ledger = state.ownLedger(at: state.latestTime)
        do {
            try QuotaState(
                provider: state.provider, url: state.url, ledger: ledger, quietPeriod: state.quietPeriod,
                keyed: state.keyed, key: state.key, others: state.othersKept()
            ).write(to: file)
            if state.saveFailure != nil {
                logger.info("the quota state is kept again", metadata: ["file": "\(file.path)"])
            }
            state.saveFailure = nil
        } catch {
            let reason = "\(error)"
            if state.saveFailure != reason {
                logger.warning(
                    "cannot keep the quota state; calls spent are forgotten on restart (said again only when the reason changes)",
                    metadata: ["file": "\(file.path)", "error": "\(reason)"])
            }
            state.saveFailure = reason
        }
    }

    /// The most owners left the file keeps (`State.othersKept`): a few deploys to roll back. Each
    /// ledger holds at most a month (~140 KB for batches every few seconds), so the file stays
    /// well under `QuotaState.maxFileBytes`.
    static var maxOthersKept: Int { 8 }

    /// Keeps the state in `file` from now on (written at once), or in memory only (nil): for an
    /// account a reload left, which still settles its late batches, so that only the account
    /// asking now writes the file. Beside it, `others`: what the accounts a reload left know
    /// (`keptStates`), so the file keeps them for a restart back (`AirQualityFeed`'s accounts of
    /// their own, one per server).
    func keep(in file: URL?, beside others: [QuotaState] = []) {
        keep(beside: others) { $0.file = file }
    }

    /// Keeps `others` beside its owner's state, in the file at once: what an account a reload
    /// left learned since (a batch out at the reload brought a refusal back). `first` changes
    /// the state before, under the same lock.
    func keep(beside others: [QuotaState], first: (inout State) -> Void = { _ in }) {
        let began = state.withLockedValue { state in
            first(&state)
            defer { save(&state) }
            return state.remember(others, upstream: upstream)
        }
        if let began { tell(began) }
    }

    /// What the account knows, for the account that keeps the file now (`keep(in:beside:)`): its
    /// owner's state, the batches out counted as spent, and those a reload left.
    func keptStates() -> [QuotaState] {
        state.withLockedValue { state in
            let own = QuotaState(
                provider: state.provider, url: state.url, ledger: state.ownLedger(at: state.latestTime),
                quietPeriod: state.quietPeriod, keyed: state.keyed, key: state.key)
            return [own] + state.leftWithBatchesOut(at: state.latestTime).values
        }
    }
}
