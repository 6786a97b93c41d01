/// A batch's places reserved in a `QuotaAccount` (`reserve`), for the owner the account had
/// when the batch went out: what the batch spends and a refusal it brings back belong to that
/// owner, even when a reload moved the account to another server while it was out.
public struct QuotaReservation: Sendable, Equatable {
    /// How many places fit, and go in the batch.
    public let places: Int
    public let callsPerPlace: Double
    let provider: ProviderName
    let url: String
    /// Sent with a key: its calls and refusal are the key's quota, never another account's.
    var keyed = false
    /// The fingerprint of the key it was sent with (`QuotaState.key`).
    var key: String?

    /// The owner asked, as the log names it (`QuotaState.owner`).
    var owner: String { QuotaState.owner(provider, url, keyed: keyed, key: key) }
    /// The owner asked, as `QuotaAccount` keys the ones a reload left (`QuotaState.ownerID`).
    var ownerID: String { QuotaState.ownerID(provider, url, keyed: keyed, key: key) }

    /// `provider` at `url` (with a key or without, and which) with no places reserved: an owner
    /// asked, to compare with or to file under.
    static func asking(_ provider: ProviderName, _ url: String, keyed: Bool = false, key: String? = nil)
        -> QuotaReservation
    {
        QuotaReservation(places: 0, callsPerPlace: 0, provider: provider, url: url, keyed: keyed, key: key)
    }

    /// What the account keeps of the owner when it knows nothing of it yet.
    var emptyState: QuotaState {
        QuotaState(provider: provider, url: url, ledger: CallLedger(), quietPeriod: nil, keyed: keyed, key: key)
    }
}
