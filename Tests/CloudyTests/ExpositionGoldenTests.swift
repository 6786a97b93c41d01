import Foundation
import XCTest

@testable import Cloudy

/// The `/metrics` body for a fixed state, compared byte for byte with files in
/// `Fixtures/golden/`. Regenerate after a deliberate change with
/// `CLOUDY_UPDATE_GOLDEN=1 swift test --filter ExpositionGoldenTests`, then read the diff.
final class ExpositionGoldenTests: XCTestCase {
    static let fetchedAt = 1781525760.0

    /// Three places decoded from the shared multi-place fixture plus one that never succeeded.
    func fixedState(units: (UnitSettings, UnitSettings, UnitSettings)) throws -> (
        Config, [PlaceStatus], ExporterTelemetry
    ) {
        // London's thresholds are its own: frost at 37.4 °F (3 °C), heat off.
        var london = Place(
            name: "London", latitude: 51.5085, longitude: -0.1257, timezone: "Europe/London", units: units.1)
        london.alerts[.frost] = 3
        london.alerts[.heat] = nil
        let places = [
            Place(name: "Berlin", latitude: 52.52, longitude: 13.41, units: units.0),
            london,
            Place(name: "New York", latitude: 40.7143, longitude: -74.006, units: units.2),
            Place(name: "Nowhere \"quoted\" \\ back\nslash", latitude: 0, longitude: 0, units: units.0),
        ]
        let body = try TestPaths.fixtureBytes("open-meteo-forecast-multi.json")
        let snapshots = try OpenMeteoProvider.decode(
            body, places: Array(places.prefix(3)), forecast: ForecastSettings()
        )
        .map { try $0.get() }
        var statuses = zip(places, snapshots).map {
            PlaceStatus(place: $0, snapshot: $1, lastSuccess: Self.fetchedAt, lastAttempt: Self.fetchedAt)
        }
        statuses.append(PlaceStatus(place: places[3], lastAttempt: Self.fetchedAt, lastError: "open-meteo: HTTP 503"))
        // Air quality: Berlin's full answer, New York's without pollen (outside Europe), London's
        // ask failed (its weather stays), the last place was never asked.
        let berlinAir = try OpenMeteoAirQuality.decode(
            TestPaths.fixtureBytes("open-meteo-air-quality.json"), places: [places[0]], forecast: ForecastSettings())
        let newYorkAir = try OpenMeteoAirQuality.decode(
            TestPaths.fixtureBytes("open-meteo-air-quality-multi.json"), places: [places[0], places[2]],
            forecast: ForecastSettings())
        statuses[0].airQuality = AirQualityStatus().recording(berlinAir[0], at: Self.fetchedAt)
        statuses[1].airQuality = AirQualityStatus()
            .recording(.failure(WeatherFetchError("open-meteo-air-quality: HTTP 503")), at: Self.fetchedAt)
        statuses[2].airQuality = AirQualityStatus().recording(newYorkAir[1], at: Self.fetchedAt)
        let telemetry = ExporterTelemetry(startedAt: 1_781_525_000)
        telemetry.recordUpstream(provider: .openMeteo, code: "200")
        telemetry.recordUpstream(provider: .openMeteo, code: "200")
        telemetry.recordUpstream(provider: .openMeteo, code: "timeout")
        telemetry.recordRefresh(seconds: 0.2)
        telemetry.recordRefresh(seconds: 3)
        var config = Config(refresh: RefreshSettings(interval: 600, timeout: 10, staleAfter: 1800), places: places)
        config.airQuality = AirQualitySettings()
        // Berlin asks DWD and New York NWS; London and Nowhere are outside every area.
        config.warnings = WarningSettings(sources: [
            WarningSourceSettings(name: .nws), WarningSourceSettings(name: .dwd),
        ])
        // Two Open-Meteo requests, one of them for three places at 2.9 calls each, and the plan
        // of the public host's free quota.
        telemetry.recordCalls(provider: "open-meteo", calls: 8.7)
        telemetry.recordCalls(provider: "open-meteo", calls: 11.6)
        telemetry.recordPlan(RefreshPlan(config))
        return (config, statuses, telemetry)
    }

    /// `quiet`: the provider's quota refusal every place shows.
    func render(units: (UnitSettings, UnitSettings, UnitSettings), quiet: QuietPeriod? = nil) throws
        -> RenderedMetrics
    {
        var (config, statuses, telemetry) = try fixedState(units: units)
        for index in statuses.indices { statuses[index].quietPeriod = quiet }
        return RenderedPages(
            config: config, statuses: statuses,
            warnings: try WarningFixtures.board([("Berlin", .dwd), ("New York", .nws)], at: Self.fetchedAt),
            telemetry: telemetry.read(), telemetryPath: "/metrics",
            now: Self.fetchedAt + 60, processMetrics: ProcessMetrics.page
        ).metrics
    }

    static let baseUnits = UnitSettings()

    func testDefaultUnitsMatchGoldenAndPromtoolFindsNothing() throws {
        let rendered = try render(units: (Self.baseUnits, Self.baseUnits, Self.baseUnits))
        let text = Array(rendered.prometheus.readableBytesView)
        try assertMatchesGolden(text, golden: "metrics-base-units.prom")
        // What a scrape sends: the golden text and the live process_* tail.
        let scrape = rendered.scrapeBody(.prometheus, gzip: false).flatMap { Array($0.readableBytesView) }
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(scrape))
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stdout + result.stderr, "", "promtool must find nothing with base units")
    }

    func testOtherUnitsMatchGoldenAndPromtoolOnlyAsksForBaseUnits() throws {
        let both = UnitSettings(temperature: [.celsius, .fahrenheit], windSpeed: [.kilometersPerHour, .knots])
        let imperial = UnitSettings(temperature: [.fahrenheit], windSpeed: [.milesPerHour])
        // Refused for the day after the refresh: the page says until when.
        let refused = QuietPeriod(
            provider: .openMeteo, reason: "open-meteo: HTTP 429: Daily API request limit exceeded.",
            until: 1_781_568_060)
        let rendered = try render(units: (Self.baseUnits, both, imperial), quiet: refused)
        let text = Array(rendered.prometheus.readableBytesView)
        try assertMatchesGolden(text, golden: "metrics-mixed-units.prom")
        let openMetrics = Array(rendered.openMetrics.readableBytesView)
        try assertMatchesGolden(openMetrics, golden: "metrics-mixed-units.openmetrics")
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(text))
        let complaints = (result.stdout + result.stderr).split(separator: "\n")
        XCTAssertFalse(complaints.isEmpty, "fahrenheit, km/h, mph and knots are not base units")
        for complaint in complaints {
            XCTAssertTrue(complaint.contains("use base unit"), String(complaint))
        }
    }

    func testStaleWeatherDisappearsButHealthSeriesStay() throws {
        var (config, statuses, telemetry) = try fixedState(units: (Self.baseUnits, Self.baseUnits, Self.baseUnits))
        statuses[0].lastError = "open-meteo: timeout"
        statuses[0].lastAttempt = Self.fetchedAt + 1801
        statuses[1].lastSuccess = Self.fetchedAt + 1801
        config.refresh.staleAfter = 1800
        let text = String(
            buffer: RenderedPages(
                config: config, statuses: statuses, telemetry: telemetry.read(),
                telemetryPath: "/metrics", now: Self.fetchedAt + 1801,
                processMetrics: ProcessMetrics.page
            ).metrics.prometheus)
        XCTAssertFalse(text.contains("weather_temperature_celsius{location=\"Berlin\"}"))
        XCTAssertTrue(
            text.contains("weather_temperature_celsius{location=\"London\"} "),
            "a place whose last success is fresh keeps its series")
        XCTAssertFalse(text.contains("weather_temperature_celsius{location=\"New York\"}"))
        XCTAssertTrue(text.contains("weather_up{location=\"Berlin\"} 0"))
        XCTAssertTrue(text.contains("weather_last_success_timestamp_seconds{location=\"Berlin\"} 1781525760"))
        XCTAssertTrue(text.contains("weather_location_info{location=\"Berlin\","))
    }
}
