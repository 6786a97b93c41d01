import Logging
import NIOConcurrencyHelpers

/// The warning services on the shared scheduler: one `ConfiguredFeed` per source Cloudy knows,
/// configured or not, so a reload can add a source (its feed's schedule fills) or remove one (its
/// schedule empties: it is not asked again, and its series leave with the store's reload). Each
/// has its own client, so a hung service holds neither the weather nor another service, and its
/// own back-off; none has a quota to spend (`callsPerPlace` 0, an account with no limits).
public enum WarningFeeds {
    public static func make(
        config: Config, store: WeatherStore, locator: any PlaceLocator, userAgent: String, logger: Logger,
        clock: ExporterClock
    ) -> [ConfiguredFeed<[WeatherWarning]>] {
        WarningSourceName.allCases.map { name in
            let client = CurlHTTPClient(userAgent: userAgent)
            let recorder = store.telemetry
            return ConfiguredFeed(
                config: config, recorder: WarningRecorder(store: store, source: name),
                account: QuotaAccount(
                    provider: config.provider.name, url: name.defaultURL, quota: .unlimited, file: nil,
                    now: clock.now(), logger: logger),
                client: client, locator: locator, logger: logger, clock: clock,
                schedule: { $0.warnings.schedule(name, places: $0.places) },
                source: { config, timeout in
                    let settings = settings(name, config)
                    return CoveredPlaces(
                        source: WarningSources.make(
                            settings, timeout: timeout, client: client, recorder: recorder, clock: clock,
                            logger: logger),
                        settings: WarningSettings(sources: [settings]), cut: NIOLockedValueBox([]))
                },
                sourceChanged: { config, previous in configured(name, config) != configured(name, previous) },
                server: { configured(name, $0)?.url })
        }
    }

    /// The source's settings as configured; its default ones while it is not (its feed then has
    /// no places, so it is never asked).
    static func settings(_ name: WarningSourceName, _ config: Config) -> WarningSourceSettings {
        configured(name, config) ?? WarningSourceSettings(name: name)
    }

    static func configured(_ name: WarningSourceName, _ config: Config) -> WarningSourceSettings? {
        config.warnings.sources.first { $0.name == name }
    }
}

/// A warning source asked only for the places that ask it (`WarningSettings.sources(for:)`) once
/// located: the feed leaves a `city:` place the geocoder found outside the area out of the
/// refresh (`asks`), so it costs no request and plays no part in the back-off. A list longer than
/// a place shows (`PlaceWarnings.maxInForce`) is logged when it first is.
struct CoveredPlaces: FeedSource {
    let source: any WarningSource
    /// This source alone: whether a place asks it depends on nothing else (so a reload that
    /// changes only the other sources keeps this one as it is).
    let settings: WarningSettings
    /// The places whose last list was longer than a place shows, logged once until it is not.
    let cut: NIOLockedValueBox<Set<String>>

    var providerLabel: String { source.providerLabel }

    func asks(_ place: Place) -> Bool {
        settings.sources(for: place).contains { $0.name == source.name }
    }

    /// The places the feed kept (`asks`), each in the area.
    func fetch(_ places: [Place], logger: Logger) -> [Result<[WeatherWarning], WeatherFetchError>] {
        let outcomes = source.fetch(places, logger: logger)
        for (place, outcome) in zip(places, outcomes) {
            guard case .success(let listed) = outcome else { continue }
            let newlyCut = cut.withLockedValue { cut in
                guard listed.count > PlaceWarnings.maxInForce else {
                    cut.remove(place.name)
                    return false
                }
                return cut.insert(place.name).inserted
            }
            guard newlyCut else { continue }
            logger.warning(
                "warning list longer than a place shows; only the most severe have series, weather_warnings counts all",
                metadata: [
                    "source": "\(source.name.rawValue)", "location": "\(place.name)", "listed": "\(listed.count)",
                    "shown": "\(PlaceWarnings.maxInForce)",
                ])
        }
        return outcomes
    }
}
