import Foundation
import Logging
import NIOConcurrencyHelpers

/// The air-quality feed: the `air_quality:` source asked for every place on the weather's
/// `refresh.interval` (or, on a quota of its own, the one `refresh.over_quota` fitted to it)
/// by a `Feed` of its own (its own back-off, timer and HTTP client, so a
/// failing or slow air-quality API never delays the weather or a scrape), recording into the
/// places' air-quality statuses only. `city:` places are located by the weather's `Geocoder`.
///
/// It spends the weather provider's `QuotaAccount` when its calls spend the provider's quota
/// (`AirQualitySettings.sharesQuota`: Open-Meteo's free hosts count both on one limit per
/// client, OpenWeatherMap's air pollution spends the provider's key), so both feeds plan and
/// pace together, a quota refusal quiets both, and `quota.json` keeps the sum; otherwise an
/// account of its own (kept in `quota-air-quality.json`). Without `air_quality:` the feed is there
/// with no places and no account of its own, so a reload can turn it on (a refresh at once) or off
/// (its series leave with the config); such a reload, and one that moves it to another account,
/// builds it afresh.
public final class AirQualityFeed: ScheduledFeed {
    /// Which account the feed spends: none while `air_quality:` is off (it asks nothing), the
    /// weather's, or its own for a source, URL and key (`ProviderSettings.quotaKey`: another key
    /// is another quota).
    enum Spending: Equatable, Sendable {
        case off
        case weather
        case own(AirQualitySourceName, url: String, key: String? = nil)
    }

    private struct Current: Sendable {
        var feed: Feed<AirQualityReport>
        var spending: Spending
        var started = false
    }

    /// What every feed it builds is made of.
    fileprivate struct Parts: Sendable {
        let store: WeatherStore
        let weather: Refresher
        let client: CurlHTTPClient
        /// `refresh.timeout`, which the source's requests read: a reload sets it here.
        let timeout: RequestTimeout
        /// The accounts of its own that a reload left (by owner), for a reload back. Kept, not
        /// copied: they stay linked to the weather's, so they go on hearing of that quota's
        /// refusals, and a reload of the forecast onto their quota finds what they know.
        let leftOwn = NIOLockedValueBox<[String: QuotaAccount]>([:])
        let logger: Logger
        let clock: ExporterClock
        /// Where an account of its own keeps its calls and a refusal over a restart
        /// (`<storage.path>/quota-air-quality.json`); nil: in memory only.
        let ownQuotaFile: URL?
        /// Whether an account of its own was made in this process: the first reads what the file
        /// kept before the restart; later ones (after reloads) write it, reading nothing.
        let madeOwn = NIOLockedValueBox(false)
    }

    private let parts: Parts
    private let current: NIOLockedValueBox<Current>
    /// Every feed it builds asks through this one.
    public var client: CurlHTTPClient { parts.client }

    public init(
        config: Config, store: WeatherStore, weather: Refresher, client: CurlHTTPClient, logger: Logger,
        clock: ExporterClock, ownQuotaFile: URL? = nil
    ) {
        parts = Parts(
            store: store, weather: weather, client: client, timeout: RequestTimeout(config.refresh.timeout),
            logger: logger, clock: clock, ownQuotaFile: ownQuotaFile)
        let spending = Self.spending(config)
        current = NIOLockedValueBox(Current(feed: parts.feed(config, spending: spending), spending: spending))
    }

    /// The feed asking now (another one after a reload that moved it to another account).
    var feed: Feed<AirQualityReport> { current.withLockedValue { $0.feed } }

    /// The account its calls are spent on.
    var account: QuotaAccount { feed.account }

    public func start() {
        let feed = current.withLockedValue { current in
            current.started = true
            return current.feed
        }
        feed.start()
    }

    public func stop(timeout: Double) {
        let feed = current.withLockedValue { current in
            current.started = false
            return current.feed
        }
        feed.stop(timeout: timeout)
    }

    public func apply(_ config: Config, previous: Config) {
        parts.timeout.seconds = config.refresh.timeout  // from the next request on, asking nothing sooner
        let spending = Self.spending(config)
        let (feed, spent, started) = current.withLockedValue { ($0.feed, $0.spending, $0.started) }
        guard spent != spending else {
            // What else the source's requests carry: Open-Meteo's the forecast's days and hours,
            // OpenWeatherMap's the key (its current air pollution has no days to follow).
            let carriedChanged =
                (config.airQuality ?? AirQualitySettings()).source == .openMeteo
                ? config.forecast != previous.forecast : config.provider.apiKey != previous.provider.apiKey
            let fetchChanged = config.airQuality?.asked != previous.airQuality?.asked || carriedChanged
            // On the weather's account that the reload moved to another owner (another key): the
            // back-off and the wait for the quiet period left start afresh, as the weather's do.
            let ownerChanged =
                spending == .weather && !config.provider.countsOnTheSameQuota(as: previous.provider)
            feed.apply(
                Self.schedule(config), source: fetchChanged ? parts.source(config) : nil,
                restart: ownerChanged ? .afresh : nil)
            return
        }
        // Another account: calls spent and a quiet period belong to the one that was asked, also
        // those of a batch still out (it comes back to the feed retired below). An account of its
        // own on the quota the weather's now spends (the forecast moved to the server the air
        // quality asked alone) is taken in, so its refusal still holds there.
        var settled: (@Sendable () -> Void)?
        // Hands what the account left knows to the account of its own asking then (`settled`,
        // and once more when the next feed is in: a batch may settle before it is).
        var handOver: (@Sendable () -> Void)?
        // The page rendered by the reload still shows a refusal of the account left: rendered
        // again below, it is gone at once, not at the weather's next refresh.
        var shownRefusal = false
        if spent.isOwn {
            shownRefusal = feed.account.quietPeriod.map { $0.until > parts.clock.now() } ?? false
            parts.store.telemetry.recordQuotaRefusal(source: parts.source(previous).providerLabel, until: nil)
            let left = previous.airQuality ?? AirQualitySettings()
            // Only the account asking now keeps the file; the one left still settles late batches.
            feed.account.keep(in: nil)
            if spending == .weather, left.countsWith(config.provider.name, url: config.provider.url) {
                // The weather's account knows it from now on (the calls of a batch out among them).
                let (own, weather, clock) = (feed.account, parts.weather.account, parts.clock)
                if let kept = own.kept(sharedWith: { _, _ in true }) { weather.absorb(kept) }
                // A refusal that batch brings back is the quota's the weather now asks (on the
                // public hosts, the forecast's host counts the air-quality host's calls): held by
                // the weather's account while it asks there, else kept for that owner and told to
                // the accounts asking it then.
                let shared = weather.askingNow
                settled = {
                    guard let quiet = own.quietPeriod, quiet.until > clock.now() else { return }
                    _ = weather.beginQuietPeriod(reason: quiet.reason, until: quiet.until, refusing: shared)
                }
            } else {
                let own = feed.account
                parts.leftOwn.withLockedValue { $0[own.askingNow.ownerID] = own }
                // A refusal the batch out brings back reaches the file, which the account asking
                // then keeps (one of its own), for a restart on a config rolled back.
                let current = current
                handOver = {
                    let states = own.keptStates()
                    current.withLockedValue { $0.spending.isOwn ? $0.feed.account : nil }?.keep(beside: states)
                }
                settled = handOver
            }
        }
        feed.retire(leavingAccount: spent.isOwn, then: settled)
        let next = parts.feed(config, spending: spending)
        current.withLockedValue { $0 = Current(feed: next, spending: spending, started: started) }
        handOver?()
        if shownRefusal { parts.store.render(now: parts.clock.now()) }
        if started { next.start() }
    }

    /// Every place while `air_quality:` is on, none while it is off, on the weather's interval
    /// or, on a quota of its own it would overrun, the one `refresh.over_quota: stretch` gave it.
    static func schedule(_ config: Config) -> FeedSchedule {
        FeedSchedule(
            places: config.airQuality == nil ? [] : config.places,
            interval: config.airQuality?.stretchedInterval ?? config.refresh.interval,
            callsPerPlace: CallCost.airQualityPerPlace(config))
    }

    static func spending(_ config: Config) -> Spending {
        guard let settings = config.airQuality else { return .off }
        guard !settings.sharesQuota(with: config.provider) else { return .weather }
        // OpenWeatherMap's air pollution is asked with the provider's key, Open-Meteo's with none.
        let key = settings.source == .openWeatherMap ? config.provider.quotaKey : nil
        return .own(settings.source, url: settings.url, key: key)
    }

}

extension AirQualityFeed.Spending {
    var isOwn: Bool {
        if case .own = self { return true }
        return false
    }
}

extension AirQualityFeed.Parts {
    func feed(_ config: Config, spending: AirQualityFeed.Spending) -> Feed<AirQualityReport> {
        let source = source(config)
        return Feed(
            source: source, schedule: AirQualityFeed.schedule(config),
            recorder: StatusRecorder(
                store: store, status: \.airQuality, ownAccount: spending.isOwn ? source.providerLabel : nil),
            account: account(for: spending, config, upstream: source.providerLabel), client: client,
            locator: weather.geocoder, logger: logger, clock: clock)
    }

    private func account(for spending: AirQualityFeed.Spending, _ config: Config, upstream: String) -> QuotaAccount {
        guard case .own(_, _, let key) = spending else { return weather.account }  // off: no place is asked
        let settings = config.airQuality ?? AirQualitySettings()
        // Kept in `ownQuotaFile` (quota.json is the weather's account). It is the one a reload
        // left on this server (a reload back), or else starts with what the file kept from
        // before a restart (read by the process's first account of its own; one for another
        // server keeps it for a reload here) and what the weather's account knows of the same
        // quota (the server both asked before a reload moved the forecast to a mirror, or
        // before a restart, whose refusal for the day still holds), linked to it.
        let quota = config.replicaShare(of: settings.ownQuota)
        let back = leftOwn.withLockedValue { left in
            left.first { $0.value.isAsking(.asking(settings.quotaOwner, settings.url, key: key)) }.flatMap {
                left.removeValue(forKey: $0.key)
            }
        }
        // What the accounts a reload left know, kept in the file beside the one asking.
        func leftStates() -> [QuotaState] { leftOwn.withLockedValue { Array($0.values) }.flatMap { $0.keptStates() } }
        if let back {
            back.update(provider: settings.quotaOwner, url: settings.url, quota: quota, key: key)
            // What the forecast learned of that quota while it asked that server meanwhile.
            if let known = weather.account.kept(sharedWith: settings.countsWith) { back.absorb(known) }
            back.keep(in: ownQuotaFile, beside: leftStates())
            return back
        }
        let sharedQuota: @Sendable (ProviderName, String) -> Bool = { settings.countsWith($0, url: $1) }
        let first = madeOwn.withLockedValue { made in
            defer { made = true }
            return !made
        }
        let account = weather.account.linkedAccount(counting: sharedQuota) { carried in
            QuotaAccount(
                provider: settings.quotaOwner, upstream: upstream, url: settings.url, quota: quota,
                file: first ? ownQuotaFile : nil, now: clock.now(), logger: logger, carried: carried, key: key)
        }
        if !first {
            for left in leftOwn.withLockedValue({ Array($0.values) }) {
                if let known = left.kept(sharedWith: settings.countsWith) { account.absorb(known) }
            }
            account.keep(in: ownQuotaFile, beside: leftStates())
        }
        return account
    }

    func source(_ config: Config) -> any FeedSource<AirQualityReport> {
        let settings = config.airQuality ?? AirQualitySettings()
        let upstream = Upstream(
            baseURL: settings.url, limit: timeout, client: client, recorder: store.telemetry, clock: clock)
        return Self.feedSource(
            settings.makeSource(
                upstream, forecast: config.forecast, apiKey: config.provider.apiKey,
                sharingQuota: AirQualityFeed.spending(config) == .weather))
    }

    /// The source as the feed takes it (the existential opened, as Swift will not upcast it).
    private static func feedSource<Source: AirQualitySource>(_ source: Source) -> any FeedSource<AirQualityReport> {
        source
    }
}
