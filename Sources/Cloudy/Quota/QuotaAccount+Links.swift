import NIOConcurrencyHelpers

/// Accounts of two feeds that count one quota while each asks another owner: the forecast on a
/// mirror and the air quality alone on the Open-Meteo server the forecast left. What a batch to
/// that server brings back is filed where it happened and in the other account at once; a reload
/// of the forecast onto the quota the other account asks takes in what it knows.
extension QuotaAccount {
    /// An account of another feed, made by `make` from what this account knows of the owners
    /// `counts` names (`kept(sharedWith:)`), and linked to this one in the same moment (so a
    /// refusal that comes back meanwhile is neither missed nor counted twice): what a batch out
    /// to an owner this account left brings back (its calls, a refusal) is filed in it too, and a
    /// reload of this account onto an owner `counts` names takes in what it knows
    /// (`update`). Held weakly: an account no feed keeps is let go.
    public func linkedAccount(
        counting counts: @escaping @Sendable (ProviderName, String) -> Bool, make: (QuotaState?) -> QuotaAccount
    ) -> QuotaAccount {
        state.withLockedValue { state in
            let account = make(state.kept(sharedWith: counts))
            linked.withLockedValue { links in
                links.removeAll { $0.account == nil }
                links.append(LinkedAccount(account: account, counts: counts))
            }
            return account
        }
    }

    /// The linked accounts that count the quota `batch` asked (each asks an owner of it now: the
    /// link is for the owner it asks); none for a batch sent with a key, whose quota is the key's.
    func linkedAccounts(asking batch: QuotaReservation) -> [QuotaAccount] {
        guard !batch.keyed else { return [] }
        return linked.withLockedValue { links in
            links.removeAll { $0.account == nil }
            return links.compactMap { $0.counts(batch.provider, batch.url) ? $0.account : nil }
        }
    }
}

/// One account `QuotaAccount.linkedAccount` linked, held weakly.
struct LinkedAccount: Sendable {
    weak var account: QuotaAccount?
    let counts: @Sendable (ProviderName, String) -> Bool
}
