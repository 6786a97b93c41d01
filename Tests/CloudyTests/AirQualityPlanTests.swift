import Logging
import XCTest

@testable import Cloudy

/// The plan with air quality on the weather provider's quota: `--config.check`'s line, the
/// figures and `refresh.over_quota` count both feeds; a source on another quota is not counted.
final class AirQualityPlanTests: XCTestCase {
    let silent = Logger(label: "air-quality-plan-test") { _ in SwiftLogNoOpLogHandler() }

    /// `count` places on Open-Meteo's free hosts, forecast and air quality with pollen.
    func publicOpenMeteo(places count: Int, interval: Double = 600) -> Config {
        var config = Config(
            refresh: RefreshSettings(interval: interval),
            places: (0..<count).map { Place(name: "P\($0)", latitude: Double($0) / 2, longitude: Double($0)) })
        config.airQuality = AirQualitySettings()
        return config
    }

    func testThePlanOfAHundredPlacesCountsTheAirQualityOnTheSameQuota() {
        let plan = RefreshPlan(publicOpenMeteo(places: 100))
        XCTAssertEqual(plan.alongside, [QuotaSpending(feed: "air quality", callsPerPlace: 1.6)])
        XCTAssertEqual(plan.callsPerRefresh, 290 + 160, accuracy: 1e-9)
        XCTAssertEqual(plan.planned(.day), 450 * 144, accuracy: 1e-6)
        // 9,000 calls a day (90 %) hold 20 refreshes exactly: 19 stay below it.
        XCTAssertEqual(plan.shortestFittingInterval(), 4_548)
        XCTAssertEqual(plan.shortestFittingInterval(share: 1), 3_928)
        XCTAssertEqual(
            plan.summary,
            "100 places, open-meteo: 290 calls per refresh + air quality 160 = 450, 64,800 a day at 10m; "
                + "the free quota allows 10,000 a day: needs 1h5m28s or more (1h15m48s keeps a 10 % margin)")
        var withoutPollen = publicOpenMeteo(places: 100)
        withoutPollen.airQuality?.pollen = false
        XCTAssertEqual(RefreshPlan(withoutPollen).callsPerRefresh, 290 + 100, accuracy: 1e-9)
    }

    /// A refresh that costs exactly a window's allowance (120 places: 348 + 192 = 540, 90 % of
    /// the free 600 a minute) is planned as paced there, like a dearer one: stretched to fit, it
    /// stays below the 90 % that CloudyUpstreamQuotaNearlySpent watches, in every window.
    func testARefreshCostingExactlyAWindowsAllowanceStaysBelowTheAlert() throws {
        for (places, window) in [(120, QuotaWindow.minute), (1_000, .hour)] {
            let plan = RefreshPlan(
                try FairUse.clampInterval(publicOpenMeteo(places: places), file: nil, logger: silent))
            XCTAssertEqual(plan.callsPerRefresh, 0.9 * plan.budget.quota.limits[window]!, accuracy: 1e-9)
            for (limited, limit) in plan.budget.quota.limits {
                XCTAssertLessThan(plan.planned(limited) / limit, 0.9, "\(places) places, \(limited)")
            }
        }
    }

    /// An air-quality source on its free host's quota of its own (beside a self-hosted forecast)
    /// shows that quota and its plan under its own name, as its calls are counted, so that
    /// CloudyUpstreamQuotaNearlySpent can watch it.
    func testTheMetricsShowAnAirQualityQuotaOfItsOwn() {
        var config = publicOpenMeteo(places: 100)
        config.provider = ProviderSettings(url: "http://127.0.0.1:8080")
        let telemetry = ExporterTelemetry(startedAt: 0)
        telemetry.recordPlans(of: config)
        var page = MetricFamilies()
        telemetry.read().addSamples(to: &page, refreshInterval: 600, shard: .all)
        func sample(_ name: String, _ provider: String, window: String? = nil) -> Double? {
            page.families.first { $0.descriptor.name == name }?.samples.first { sample in
                sample.labels.contains { $0 == ("provider", provider) }
                    && (window == nil || sample.labels.contains { $0 == ("window", window!) })
            }?.value
        }
        let own = "open-meteo-air-quality"
        XCTAssertEqual(sample("cloudy_exporter_upstream_calls", own), 0, "shown before the first call")
        XCTAssertEqual(sample("cloudy_exporter_upstream_quota_calls", own, window: "day"), 10_000)
        XCTAssertEqual(sample("cloudy_exporter_upstream_planned_calls", own, window: "day"), 160 * 144)
        XCTAssertNil(sample("cloudy_exporter_upstream_quota_calls", "open-meteo", window: "day"), "self-hosted")
        XCTAssertNotNil(sample("cloudy_exporter_upstream_planned_calls", "open-meteo", window: "day"))
    }

    func testOverQuotaCoversBothFeeds() throws {
        var config = publicOpenMeteo(places: 100)
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: silent).refresh.interval, 4_548)
        let refused = try XCTUnwrap(refusal(config))
        XCTAssertTrue(
            refused.hasPrefix(
                "c.yml: refresh.interval: 100 places, open-meteo: 290 calls per refresh + air quality 160 = 450"),
            refused)
        config.refresh.overQuota = .refuse
        // 2,788 s fits the forecast alone (QuotaPlanTests), not both.
        config.refresh.interval = 2_788
        config.airQuality = nil
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: silent).refresh.interval, 2_788)
        config.airQuality = AirQualitySettings()
        XCTAssertThrowsError(try FairUse.clampInterval(config, file: nil, logger: silent))
    }

    func testOnlyASourceOnTheProvidersQuotaIsCountedWithIt() {
        var config = publicOpenMeteo(places: 10)
        // A self-hosted air-quality server is not on Open-Meteo's free quota.
        config.airQuality = AirQualitySettings(url: "http://127.0.0.1:8080")
        XCTAssertEqual(RefreshPlan(config).alongside, [])
        XCTAssertEqual(AirQualityFeed.spending(config), .own(.openMeteo, url: "http://127.0.0.1:8080"))
        // Nor is the forecast from MET Norway.
        config.airQuality = AirQualitySettings()
        config.provider = ProviderSettings(name: .metNorway)
        XCTAssertEqual(RefreshPlan(config).alongside, [])
        // OpenWeatherMap's air pollution spends the provider's key: one call per place.
        config.provider = ProviderSettings(name: .openWeatherMap, apiKey: Secret("k"))
        config.airQuality = AirQualitySettings(source: .openWeatherMap)
        XCTAssertEqual(RefreshPlan(config).alongside, [QuotaSpending(feed: "air quality", callsPerPlace: 1)])
        XCTAssertEqual(AirQualityFeed.spending(config), .weather)
        // Beside a One Call subscription (1,000 One Call calls a day) the air pollution spends
        // the free plan's own limits, not One Call's.
        config.provider.oneCall = true
        XCTAssertEqual(RefreshPlan(config).alongside, [])
        XCTAssertEqual(
            config.airQuality?.ownQuota, Quota(limits: [.minute: 60, .month: 1_000_000]))
        // Both on one self-hosted server (a test fake): one account, no quota.
        config.provider = ProviderSettings(url: "http://127.0.0.1:8080")
        config.airQuality = AirQualitySettings(url: "http://127.0.0.1:8080")
        XCTAssertEqual(AirQualityFeed.spending(config), .weather)
        config.provider = ProviderSettings(url: "http://Weather.internal./forecast")
        config.airQuality = AirQualitySettings(url: "http://weather.internal:80")
        XCTAssertEqual(AirQualityFeed.spending(config), .weather, "one server, however it is written")
    }

    /// Two servers of one's own limit nothing together: a quota 429 from one does not quiet
    /// the other, and they are not planned as one.
    func testTwoSelfHostedServersKeepAccountsOfTheirOwn() {
        var config = publicOpenMeteo(places: 10)
        for (forecast, airQuality) in [
            ("http://127.0.0.1:19201", "http://127.0.0.2:19201"),
            ("http://127.0.0.1:19201", "http://127.0.0.1:19206"),
            ("https://weather.internal", "http://weather.internal"),
            ("http://forecast.internal", "http://aq-mirror.internal"),
        ] {
            config.provider = ProviderSettings(url: forecast)
            config.airQuality = AirQualitySettings(url: airQuality)
            XCTAssertEqual(
                AirQualityFeed.spending(config), .own(.openMeteo, url: airQuality), "\(forecast), \(airQuality)")
            XCTAssertEqual(RefreshPlan(config).alongside, [])
        }
    }

    /// A source on a quota of its own has a plan of its own: `--config.check` prints it, and
    /// warns (the exporter logs it too) when pacing leaves its values older than `stale_after`:
    /// a day's allowance spent in a burst of refreshes, then hours without one; or, where one
    /// refresh is more than a window allows, a refresh paced over longer than `stale_after`.
    func testASourceOnAQuotaOfItsOwnIsPlannedAgainstItsFreeLimits() throws {
        var config = publicOpenMeteo(places: 100)
        config.provider = ProviderSettings(name: .metNorway)
        let plan = RefreshPlan.airQualityOnItsOwn(config)
        XCTAssertEqual(
            plan?.summary,
            "100 places, air quality on a quota of its own: 160 calls per refresh, 23,040 a day at 10m; "
                + "the free quota allows 10,000 a day: needs 23m14s or more (25m43s keeps a 10 % margin)")
        XCTAssertEqual(
            plan?.staleBetweenRefreshes(staleAfter: 1800),
            "air quality on a quota of its own: at 10m it needs more than its quota allows: it spends a day's "
                + "allowance in 56 refreshes, then asks nothing for about 14h50m, longer than refresh.stale_after "
                + "30m: its values leave the page meanwhile (refresh.interval 25m43s or more fits)")
        var fitting = config
        fitting.refresh.interval = 1_543
        XCTAssertNil(RefreshPlan.airQualityOnItsOwn(fitting)?.staleBetweenRefreshes(staleAfter: 1800), "it fits")
        XCTAssertEqual(
            RefreshPlan.airQualityOnItsOwn(publicOpenMeteo(places: 1000).with(provider: .metNorway))?
                .staleBetweenRefreshes(staleAfter: 1800),
            "air quality on a quota of its own: at 10m it needs more than its quota allows: it spends a day's "
                + "allowance in 5 refreshes, then asks nothing for about 22h, longer than refresh.stale_after "
                + "30m: its values leave the page meanwhile (refresh.interval 4h48m or more fits)",
            "two refreshes an hour at most (the hour's allowance): the burst takes 2 hours")
        // A refresh that costs more than the deciding window allows is paced across windows.
        var tiny = try XCTUnwrap(plan)
        tiny.budget = CallBudget(quota: Quota(limits: [.day: 100]), callsPerPlace: 1.6)
        XCTAssertEqual(
            tiny.staleBetweenRefreshes(staleAfter: 1800),
            "air quality on a quota of its own: paced within its quota, a refresh of every place takes about "
                + "1d18h40m, longer than refresh.stale_after 30m: its values leave the page between refreshes")
        XCTAssertNil(RefreshPlan.airQualityOnItsOwn(publicOpenMeteo(places: 100)), "in the weather's plan")
        config.airQuality = nil
        XCTAssertNil(RefreshPlan.airQualityOnItsOwn(config), "off")
        config.airQuality = AirQualitySettings(url: "http://127.0.0.1:8080")
        XCTAssertEqual(
            RefreshPlan.airQualityOnItsOwn(config)?.summary,
            "100 places, air quality on a quota of its own: 160 calls per refresh, 23,040 a day at 10m; no quota")
    }

    /// `refresh.over_quota` fits an air quality on a quota of its own to that quota, as it fits
    /// the weather to the weather's: `stretch` gives the air quality the interval that fits (the
    /// weather keeps its 10m) and `stale_after` outlasts it, so no burst and gap; `warn` keeps
    /// 10m; `refuse` is a config error naming `refresh.interval`.
    func testOverQuotaFitsAnAirQualityQuotaOfItsOwn() throws {
        var config = publicOpenMeteo(places: 100).with(provider: .metNorway)
        let stretched = try FairUse.clampInterval(config, file: nil, logger: silent)
        XCTAssertEqual(stretched.refresh.interval, 600, "the weather's own interval")
        XCTAssertEqual(stretched.airQuality?.stretchedInterval, 1_543)
        XCTAssertEqual(AirQualityFeed.schedule(stretched).interval, 1_543)
        let plan = try XCTUnwrap(RefreshPlan.airQualityOnItsOwn(stretched))
        XCTAssertTrue(plan.fits, plan.summary)
        XCTAssertNil(plan.staleBetweenRefreshes(staleAfter: stretched.refresh.staleAfter))
        XCTAssertEqual(stretched.refresh.staleAfter, 1_543 * 1.5, "outlasts the air quality's interval")
        XCTAssertEqual(FairUse.longestWait(stretched).of, "the air quality's, stretched to its own quota")
        XCTAssertEqual(try FairUse.clampInterval(stretched, file: nil, logger: silent), stretched, "again: the same")
        var fitting = config
        fitting.refresh.interval = 1_800
        XCTAssertNil(try FairUse.clampInterval(fitting, file: nil, logger: silent).airQuality?.stretchedInterval)
        var sharing = publicOpenMeteo(places: 100)
        sharing.refresh.interval = 4_548
        XCTAssertNil(
            try FairUse.clampInterval(sharing, file: nil, logger: silent).airQuality?.stretchedInterval,
            "on the weather's quota: fitted with it")

        config.refresh.overQuota = .warn
        let warned = try FairUse.clampInterval(config, file: nil, logger: silent)
        XCTAssertNil(warned.airQuality?.stretchedInterval)
        XCTAssertEqual(AirQualityFeed.schedule(warned).interval, 600)
        XCTAssertEqual(
            refusal(config),
            "c.yml: refresh.interval: 100 places, air quality on a quota of its own: 160 calls per "
                + "refresh, 23,040 a day at 10m; the free quota allows 10,000 a day: needs 23m14s or more (25m43s "
                + "keeps a 10 % margin) (refresh.over_quota: refuse; raise the interval, or see docs/providers.md)",
            "without pollen 100 places need 16m11s: no help")
        let fifty = try XCTUnwrap(refusal(publicOpenMeteo(places: 50).with(provider: .metNorway)))
        XCTAssertTrue(
            fifty.hasSuffix(
                "(refresh.over_quota: refuse; raise the interval or air_quality.pollen: false, or see docs/providers.md)"
            ),
            "50 places without pollen fit 10m: \(fifty)")
    }

    /// The config error `refresh.over_quota: refuse` makes of `config` (in `c.yml`); nil when it fits.
    func refusal(_ config: Config) -> String? {
        var refusing = config
        refusing.refresh.overQuota = .refuse
        do {
            _ = try FairUse.clampInterval(refusing, file: "c.yml", logger: silent)
            return nil
        } catch {
            return "\(error)"
        }
    }
}

extension Config {
    fileprivate func with(provider name: ProviderName) -> Config {
        var config = self
        config.provider = ProviderSettings(name: name)
        return config
    }
}
