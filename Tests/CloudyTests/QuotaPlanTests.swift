import Foundation
import Logging
import XCTest

@testable import Cloudy

/// Issue 16's plan without sending anything: the cost formula against Open-Meteo's documented
/// examples and against the URLs Cloudy builds, the quota in force, `provider.quota` and
/// `refresh.over_quota`, the stretched interval, and shards sharing a quota.
final class QuotaPlanTests: XCTestCase {
    let silent = Logger(label: "quota-test") { _ in SwiftLogNoOpLogHandler() }

    func places(_ count: Int) -> [Place] {
        (0..<count).map { Place(name: "P\($0)", latitude: Double($0 % 90), longitude: Double($0 % 180)) }
    }

    func publicOpenMeteo(places count: Int, interval: Double = 600, forecast: ForecastSettings = .init()) -> Config {
        Config(refresh: RefreshSettings(interval: interval), forecast: forecast, places: places(count))
    }

    // MARK: The cost formula

    /// The weather-API reference, §1.8: "18 current + 19 hourly + 16 daily = 53 variables over
    /// 7 days → 5.3 calls per location per refresh. 3 locations every 10 minutes ≈ 2 300
    /// calls/day; the 10 000/day cap would only be reached with a refresh roughly every 2.3
    /// minutes"; and the README's 29 variables over 7 days ≈ 2.9 calls per place.
    func testOpenMeteoFormulaMatchesTheDocumentedExamples() {
        XCTAssertEqual(CallCost.openMeteo(variables: 53, days: 7), 5.3, accuracy: 1e-12)
        XCTAssertEqual(3 * CallCost.openMeteo(variables: 53, days: 7) * 144, 2_300, accuracy: 15)
        let capReachedEvery = 86_400 / (10_000 / (3 * CallCost.openMeteo(variables: 53, days: 7)))
        XCTAssertEqual(capReachedEvery / 60, 2.3, accuracy: 0.05)
        XCTAssertEqual(CallCost.openMeteo(variables: 29, days: 7), 2.9, accuracy: 1e-12)
        // Days beyond 14 weigh in; fewer never lower the weight; a place costs at least one call.
        XCTAssertEqual(CallCost.openMeteo(variables: 29, days: 16), 2.9 * 16 / 14, accuracy: 1e-12)
        XCTAssertEqual(CallCost.openMeteo(variables: 29, days: 1), 2.9, accuracy: 1e-12)
        XCTAssertEqual(CallCost.openMeteo(variables: 5, days: 7), 1)
        XCTAssertEqual(CallCost.openMeteo(variables: 8, days: 16), 1)
    }

    /// The cost is taken from what `OpenMeteoProvider` puts in its URL: the variables of
    /// `current`, `hourly` and `daily`, and `forecast_days`.
    func testOpenMeteoCostFollowsTheRequestedURL() throws {
        let upstream = Upstream(
            baseURL: "http://127.0.0.1:1", timeout: 1, client: CurlHTTPClient(userAgent: "t"),
            recorder: ExporterTelemetry(startedAt: 0))
        let settings = [(7, 24), (0, 0), (16, 24), (3, 0), (0, 383), (16, 383), (1, 48)]
        for (days, hours) in settings {
            let forecast = ForecastSettings(days: days, hours: hours)
            let url = OpenMeteoProvider(upstream, forecast: forecast).url(for: places(2))
            let query = try XCTUnwrap(URLComponents(string: url)?.queryItems)
            func list(_ name: String) -> Int {
                query.first { $0.name == name }?.value?.split(separator: ",").count ?? 0
            }
            let variables = list("current") + list("hourly") + list("daily")
            let requestedDays = try XCTUnwrap(Int(query.first { $0.name == "forecast_days" }?.value ?? ""))
            let documented = max(1, Double(variables) / 10 * max(1, Double(requestedDays) / 14))
            XCTAssertEqual(CallCost.openMeteo(forecast), documented, accuracy: 1e-12, "days \(days), hours \(hours)")
        }
        XCTAssertEqual(CallCost.openMeteo(ForecastSettings()), 2.9, accuracy: 1e-12, "29 variables over 7 days")
    }

    func testOtherProvidersCostOneCallPerRequest() {
        var config = publicOpenMeteo(places: 10)
        config.provider = ProviderSettings(name: .openWeatherMap, apiKey: Secret("k"))
        XCTAssertEqual(CallBudget.of(config).callsPerRefresh(places: 10), 20, "current weather and forecast")
        config.provider.oneCall = true
        XCTAssertEqual(CallBudget.of(config).callsPerRefresh(places: 10), 10, "One Call 3.0")
        config.provider = ProviderSettings(name: .metNorway, userAgent: "a/1 a@b.c")
        XCTAssertEqual(CallBudget.of(config).callsPerRefresh(places: 10), 10)
    }

    // MARK: The quota in force

    func testFreeTiersOfThePublicHostsAndNoneElsewhere() {
        XCTAssertEqual(
            Quota.freeTier(ProviderSettings()),
            Quota(limits: [.minute: 600, .hour: 5_000, .day: 10_000, .month: 300_000]))
        XCTAssertEqual(Quota.freeTier(ProviderSettings(url: "http://api.open-meteo.com/")).limits[.day], 10_000)
        for url in ["https://api.open-meteo.com:443", "http://API.Open-Meteo.com:80/v1", "https://api.open-meteo.com."]
        {
            XCTAssertEqual(Quota.freeTier(ProviderSettings(url: url)).limits[.day], 10_000, "\(url) is the public host")
        }
        XCTAssertEqual(Quota.freeTier(ProviderSettings(apiKey: Secret("k"))), .unlimited, "a key means a paid plan")
        XCTAssertEqual(Quota.freeTier(ProviderSettings(url: "https://customer-api.open-meteo.com")), .unlimited)
        XCTAssertEqual(Quota.freeTier(ProviderSettings(url: "https://api.open-meteo.com.example.org")), .unlimited)
        XCTAssertEqual(Quota.freeTier(ProviderSettings(url: "http://127.0.0.1:8080")), .unlimited, "self-hosted")
        var owm = ProviderSettings(name: .openWeatherMap, apiKey: Secret("k"))
        XCTAssertEqual(Quota.freeTier(owm), Quota(limits: [.minute: 60, .month: 1_000_000]))
        owm.oneCall = true
        XCTAssertEqual(Quota.freeTier(owm), Quota(limits: [.day: 1_000]))
        XCTAssertEqual(Quota.freeTier(ProviderSettings(name: .metNorway)), .unlimited)
    }

    /// Pirate Weather's free plan: 10,000 calls a month per key, one call per place. Five places
    /// at 10m would spend 21,600: the interval is stretched to 24m1s (below 9,000 calls, the margin kept).
    func testDarkSkyFreePlanIsMonthlyAndStretchesFivePlacesAtTenMinutes() throws {
        let key = Secret("k")
        XCTAssertEqual(Quota.freeTier(ProviderSettings(name: .darkSky, apiKey: key)), Quota(limits: [.month: 10_000]))
        XCTAssertEqual(
            Quota.freeTier(ProviderSettings(name: .darkSky, url: "http://127.0.0.1:8080", apiKey: key)), .unlimited)
        var config = publicOpenMeteo(places: 5)
        config.provider = ProviderSettings(name: .darkSky, apiKey: key)
        XCTAssertEqual(CallBudget.of(config).callsPerRefresh(places: 5), 5, "one request per place")
        let plan = RefreshPlan(config)
        XCTAssertFalse(plan.fits)
        XCTAssertEqual(
            plan.summary,
            "5 places, dark-sky: 5 calls per refresh, 21,600 a month at 10m; "
                + "the free quota allows 10,000 a month: needs 21m36s or more (24m1s keeps a 10 % margin)")
        let log = RecordedLog()
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: log.logger).refresh.interval, 1_441)
        XCTAssertEqual(log.entries(containing: "raised to fit the provider's quota").count, 1)
        // A plan without a quota on the public host still waits a minute between refreshes;
        // a self-hosted server does not.
        config.refresh.interval = 1
        config.quota.stated = .unlimited
        XCTAssertEqual(FairUse.minimumInterval(config.provider), 60)
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: log.logger).refresh.interval, 60)
        config.provider.url = "http://127.0.0.1:8080"
        XCTAssertNil(FairUse.minimumInterval(config.provider))
    }

    func testProviderQuotaAndOverQuotaAreReadStrictly() throws {
        let base = "locations:\n  - name: A\n    latitude: 1\n    longitude: 2\n"
        var config = try ConfigLoader.parse(yaml: base)
        XCTAssertEqual(config.quota, QuotaSettings())
        XCTAssertEqual(config.refresh.overQuota, .stretch, "the default")
        config = try ConfigLoader.parse(
            yaml: "provider:\n  quota: {per_minute: 100, per_month: 1e6, per_shard: true}\n"
                + "refresh:\n  over_quota: refuse\n" + base)
        XCTAssertEqual(config.quota, QuotaSettings(stated: Quota(limits: [.minute: 100, .month: 1e6]), perShard: true))
        XCTAssertEqual(config.refresh.overQuota, .refuse)
        config = try ConfigLoader.parse(yaml: "provider:\n  quota: unlimited\n" + base)
        XCTAssertEqual(config.quota.stated, .unlimited)
        config = try ConfigLoader.parse(yaml: "provider:\n  quota:\n    per_shard: true\n" + base)
        XCTAssertEqual(config.quota, QuotaSettings(stated: nil, perShard: true), "per_shard alone keeps the default")
        XCTAssertEqual(CallBudget.of(config).quota, Quota.freeTier(config.provider))

        let refused: [(String, String)] = [
            ("provider:\n  quota: {per_week: 5}\n", "config:2: provider.quota.per_week: unknown key"),
            ("provider:\n  quota: {per_day: 0}\n", "config:2: provider.quota.per_day: must be between 1 and"),
            ("provider:\n  quota: {per_day: lots}\n", "config:2: provider.quota.per_day: must be a number"),
            ("provider:\n  quota: {per_shard: yes}\n", "config:2: provider.quota.per_shard: must be true or false"),
            ("provider:\n  quota: many\n", "config:2: provider.quota: must be unlimited or a mapping"),
            ("refresh:\n  over_quota: ignore\n", "config:2: refresh.over_quota: unknown value \"ignore\""),
        ]
        for (yaml, message) in refused {
            XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml + base)) { error in
                XCTAssertTrue("\(error)".hasPrefix(message), "\(error)")
            }
        }
    }

    // MARK: The plan and the stretched interval

    /// The example: 100 places at 10m on the free host spend 290 calls per refresh.
    func testPlanOfAHundredPlacesAtTenMinutes() {
        let plan = RefreshPlan(publicOpenMeteo(places: 100))
        XCTAssertEqual(plan.callsPerRefresh, 290, accuracy: 1e-9)
        XCTAssertEqual(plan.planned(.day), 290 * 144, accuracy: 1e-9, "144 refreshes")
        XCTAssertEqual(plan.planned(.minute), 290, accuracy: 1e-9, "one refresh a minute")
        XCTAssertFalse(plan.fits)
        // The day decides: 10,000 calls hold 34 refreshes, 9,000 (90 %) hold 31.
        XCTAssertEqual(plan.shortestFittingInterval(share: 1), 2_542)
        XCTAssertEqual(plan.shortestFittingInterval(), 2_788)
        XCTAssertEqual(
            plan.summary,
            "100 places, open-meteo: 290 calls per refresh, 41,760 a day at 10m; "
                + "the free quota allows 10,000 a day: needs 42m22s or more (46m28s keeps a 10 % margin)")
        var closer = publicOpenMeteo(places: 100)
        closer.refresh.interval = 2_700
        XCTAssertEqual(
            RefreshPlan(closer).summary,
            "100 places, open-meteo: 290 calls per refresh, 9,280 a day at 45m; "
                + "the free quota allows 10,000 a day: 93 % of it; 46m28s keeps a 10 % margin")
    }

    /// For a range of places and forecast settings, the stretched interval is the shortest whole
    /// second at which every window stays below 90 % of its limit (checked by counting the
    /// refreshes a window can hold, as documented in docs/providers.md).
    func testStretchedIntervalIsTheShortestThatFitsEveryWindow() {
        func spend(_ cost: Double, _ window: QuotaWindow, _ limit: Double, _ interval: Double) -> Double {
            if cost > 0.9 * limit { return cost * window.seconds / interval }  // paced across windows
            let refreshes = Double(Int((window.seconds / interval).rounded(.up)))
            let exact = window.seconds.truncatingRemainder(dividingBy: interval) == 0
            return cost * (exact ? window.seconds / interval : refreshes)
        }
        let cases: [(Int, ForecastSettings)] = [
            (1, .init()), (5, .init()), (24, .init()), (100, .init()), (250, .init(days: 16, hours: 24)),
            (1_000, .init()), (37, .init(days: 0, hours: 0)), (400, .init(days: 3, hours: 48)),
        ]
        for (count, forecast) in cases {
            let config = publicOpenMeteo(places: count, interval: 60, forecast: forecast)
            let stretched = try! FairUse.clampInterval(config, file: nil, logger: silent).refresh.interval
            let plan = RefreshPlan(config)
            XCTAssertEqual(stretched, max(60, plan.shortestFittingInterval() ?? 0))
            let limits = plan.budget.quota.limits
            for (window, limit) in limits {
                let spent = spend(plan.callsPerRefresh, window, limit, stretched)
                if plan.callsPerRefresh > 0.9 * limit {
                    XCTAssertLessThanOrEqual(spent, 0.9 * limit + 1e-6, "\(count) places, \(window), paced")
                } else {
                    XCTAssertLessThan(spent, 0.9 * limit - 1e-9, "\(count) places, \(window)")
                }
            }
            if stretched > 60 {
                XCTAssertTrue(
                    limits.contains {
                        spend(plan.callsPerRefresh, $0.key, $0.value, stretched - 1) >= 0.9 * $0.value - 1e-9
                    },
                    "\(count) places: one second less would not fit")
            }
        }
        // The five default cities fit at 10m but not at the 1-minute floor (issue 16).
        XCTAssertTrue(RefreshPlan(publicOpenMeteo(places: 5)).fits)
        XCTAssertFalse(RefreshPlan(publicOpenMeteo(places: 5, interval: 60)).fits)
        // 10 places cost 29 calls; 2,610 (90 % of 2,900) are exactly 90 refreshes, which would
        // sit on the alert's 90 % threshold: 89 fit below it.
        var exact = publicOpenMeteo(places: 10, interval: 60)
        exact.quota.stated = Quota(limits: [.day: 2_900])
        let exactPlan = RefreshPlan(try! FairUse.clampInterval(exact, file: nil, logger: silent))
        XCTAssertEqual(exactPlan.interval, 971)
        XCTAssertLessThan(exactPlan.planned(.day) / 2_900, 0.9)
        // 1,000 places cost 2,900 calls against 600 a minute: paced, and the day decides (8h).
        XCTAssertEqual(RefreshPlan(publicOpenMeteo(places: 1_000)).shortestFittingInterval(), 28_800)
    }

    func testOverQuotaStretchWarnOrRefuse() throws {
        var config = publicOpenMeteo(places: 100)
        let log = RecordedLog()
        let stretched = try FairUse.clampInterval(config, file: "c.yml", logger: log.logger)
        XCTAssertEqual(stretched.refresh.interval, 2_788)
        let raised = log.entries(containing: "refresh.interval raised to fit the provider's quota")
        XCTAssertEqual(raised.count, 1)
        XCTAssertEqual(raised.first?.level, .warning)
        XCTAssertEqual(raised.first?.metadata["used"], "46m28s")
        config.refresh.overQuota = .warn
        XCTAssertEqual(try FairUse.clampInterval(config, file: "c.yml", logger: log.logger).refresh.interval, 600)
        let warned = log.entries(containing: "the refresh schedule exceeds the provider's quota")
        XCTAssertEqual(warned.count, 1)
        XCTAssertEqual(warned.first?.level, .warning)
        XCTAssertEqual(warned.first?.metadata["plan"].map { "\($0)" }, RefreshPlan(config).summary)
        config.refresh.overQuota = .refuse
        XCTAssertThrowsError(try FairUse.clampInterval(config, file: "c.yml", logger: silent)) { error in
            XCTAssertTrue(
                "\(error)".hasPrefix("c.yml: refresh.interval: 100 places, open-meteo: 290 calls"), "\(error)")
            XCTAssertTrue(
                "\(error)".contains("needs 42m22s or more (46m28s keeps a 10 % margin) (refresh.over_quota: refuse"),
                "\(error)")
        }
        config.refresh.interval = 3_600
        XCTAssertEqual(
            try FairUse.clampInterval(config, file: nil, logger: silent).refresh.interval, 3_600, "fits: kept")
        // No quota (a self-hosted URL): nothing to fit.
        var selfHosted = publicOpenMeteo(places: 1_000, interval: 1)
        selfHosted.provider.url = "http://127.0.0.1:8080"
        selfHosted.refresh.overQuota = .refuse
        XCTAssertEqual(try FairUse.clampInterval(selfHosted, file: nil, logger: silent).refresh.interval, 1)
        XCTAssertTrue(RefreshPlan(selfHosted).summary.hasSuffix("; no quota"), RefreshPlan(selfHosted).summary)
    }

    // MARK: Shards

    func testShardsShareOneQuotaUnlessEachHasItsOwn() throws {
        var config = publicOpenMeteo(places: 100)
        config.shard = Shard(index: 1, count: 4)
        XCTAssertEqual(CallBudget.of(config).quota.limits[.day], 2_500, "a quarter of 10,000 a day")
        XCTAssertEqual(CallBudget.of(config).quota.limits[.minute], 150)
        // 25 places on a quarter of the quota need what 100 places need on all of it.
        config.places = places(25)
        XCTAssertEqual(
            RefreshPlan(config).shortestFittingInterval(),
            RefreshPlan(publicOpenMeteo(places: 100)).shortestFittingInterval())
        XCTAssertTrue(
            RefreshPlan(config).summary.contains("this shard's 1/4 share of the free quota allows 2,500 a day"))
        config.quota.perShard = true
        XCTAssertEqual(CallBudget.of(config).quota.limits[.day], 10_000, "per_shard: the whole quota each")
        config.quota = QuotaSettings(stated: Quota(limits: [.day: 9_000]))
        XCTAssertEqual(CallBudget.of(config).quota, Quota(limits: [.day: 2_250]), "a stated quota is shared too")
    }

    // MARK: The metrics of the plan

    func testTelemetryShowsCallsQuotaAndPlan() {
        let telemetry = ExporterTelemetry(startedAt: 0)
        var config = publicOpenMeteo(places: 100)
        config.refresh.interval = 2_880
        telemetry.recordPlan(RefreshPlan(config))
        var page = MetricFamilies()
        telemetry.read().addSamples(to: &page, refreshInterval: 2_880, shard: .all)
        func sample(_ name: String, window: String? = nil) -> Double? {
            page.families.first { $0.descriptor.name == name }?.samples.first {
                window == nil || $0.labels.contains { $0 == ("window", window!) }
            }?.value
        }
        XCTAssertEqual(sample("cloudy_exporter_upstream_calls"), 0, "shown before the first call")
        XCTAssertEqual(sample("cloudy_exporter_upstream_quota_calls", window: "hour"), 5_000)
        XCTAssertEqual(sample("cloudy_exporter_upstream_planned_calls", window: "day"), 290 * 30)
        telemetry.recordCalls(provider: "open-meteo", calls: 2.9)
        telemetry.recordCalls(provider: "open-meteo", calls: 2.9)
        XCTAssertEqual(telemetry.callCount(provider: .openMeteo), 5.8, accuracy: 1e-12)
    }
}
