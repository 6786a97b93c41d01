import NIOConcurrencyHelpers

/// Accounts of two feeds that count one quota while each asks another owner: the forecast on a
/// mirror and the air quality alone on the Open-Meteo server the forecast left (or the other way
/// round). Each refusal and call is filed where it happened, and the other account learns of it
/// at once, not at the next reload that happens to bring them together.
extension QuotaAccount {
    /// Links `other`, another feed's account, for the owners `counts` says it shares with this
    /// one (`AirQualitySettings.countsWith`): what a batch out to an owner this account left
    /// brings back (its calls, a refusal) is filed in `other` too while `other` asks that owner,
    /// and a reload of this account onto `other`'s owner takes in what `other` knows. Held
    /// weakly: an account a reload replaced is let go.
    public func link(_ other: QuotaAccount, counting counts: @escaping @Sendable (ProviderName, String) -> Bool) {
        guard other !== self else { return }
        linked.withLockedValue { links in
            links.removeAll { $0.account == nil }
            links.append(LinkedAccount(account: other, counts: counts))
        }
    }

    /// The linked accounts that count the quota of `provider` at `url` (each asks an owner of it
    /// now: the link is for the owner it asks).
    func linkedAccounts(counting provider: ProviderName, _ url: String) -> [QuotaAccount] {
        linked.withLockedValue { links in
            links.compactMap { $0.counts(provider, url) ? $0.account : nil }
        }
    }
}

/// One account `QuotaAccount.link` linked, held weakly.
struct LinkedAccount: Sendable {
    weak var account: QuotaAccount?
    let counts: @Sendable (ProviderName, String) -> Bool
}
