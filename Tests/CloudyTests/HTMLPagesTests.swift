import Foundation
import NIOCore
import XCTest

@testable import Cloudy

/// The HTML pages for a fixed state, byte for byte against `Fixtures/golden/*.html`, and what
/// every page must hold whatever the state: escaped names, no script, nothing from elsewhere.
/// Regenerate after a deliberate change with
/// `CLOUDY_UPDATE_GOLDEN=1 swift test --filter HTMLPagesTests`, then read the diff.
final class HTMLPagesTests: XCTestCase {
    static let now = PlaceSnapshots.observedAt + 60
    static let hostileNames = [
        "<script>alert(1)</script>", "\"quoted\" & 'single'", "a/b/../c", "Zürich ☁️🌧", "القاهرة (Cairo)",
    ]

    /// Berlin (up, 12h, both temperature units, frost at 15 °C and UV at 6: every day crosses
    /// them), Oslo (down, its weather still fresh, the default thresholds: no day crosses them),
    /// Lima (stale), a place still waiting, and the hostile names (up, sparse data).
    func fixedState() -> (Config, [PlaceStatus]) {
        let both = UnitSettings(
            temperature: [.celsius, .fahrenheit], windSpeed: [.metersPerSecond, .knots], time: .h12)
        var berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41, units: both)
        berlin.alerts[.frost] = 15
        berlin.alerts[.uv] = 6
        let places =
            [
                berlin,
                Place(name: "Oslo", latitude: 59.91, longitude: 10.75),
                Place(name: "Lima", latitude: -12.05, longitude: -77.04),
                Place(name: "Springfield", city: CitySearch(query: "Springfield, Illinois")),
            ] + Self.hostileNames.map { Place(name: $0, latitude: 1, longitude: 1) }
        let now = Self.now
        var statuses = [
            PlaceStatus(place: places[0], snapshot: PlaceSnapshots.full, lastSuccess: now - 60, lastAttempt: now - 60),
            PlaceStatus(
                place: places[1], snapshot: PlaceSnapshots.full, lastSuccess: now - 600, lastAttempt: now - 60,
                lastError: "met-norway: HTTP 429 <too many>"),
            PlaceStatus(
                place: places[2], snapshot: PlaceSnapshots.full, lastSuccess: now - 7260, lastAttempt: now - 60,
                lastError: "open-meteo: timeout"),
            PlaceStatus(place: places[3]),
        ]
        statuses += places.dropFirst(4).map {
            PlaceStatus(place: $0, snapshot: PlaceSnapshots.sparse, lastSuccess: now - 60, lastAttempt: now - 60)
        }
        // Air quality: Berlin's is fresh (pollen in season), Oslo's ask failed and its last
        // report is too old to show; the others were never asked.
        statuses[0].airQuality = AirQualityStatus(
            report: Self.berlinAir, lastSuccess: now - 60, lastAttempt: now - 60)
        statuses[1].airQuality = AirQualityStatus(
            report: Self.berlinAir, lastSuccess: now - 7200, lastAttempt: now - 60,
            lastError: "open-meteo-air-quality: HTTP 503")
        var config = Config(
            refresh: RefreshSettings(interval: 600, timeout: 10, staleAfter: 1800),
            forecast: ForecastSettings(days: 3, hours: 2), places: places)
        config.airQuality = AirQualitySettings()
        config.warnings = WarningFixtures.allSources
        return (config, statuses)
    }

    static let berlinAir = AirQualityReport(
        observedAt: PlaceSnapshots.observedAt, indices: AirQualityIndices(european: 58, epa: 63),
        concentrations: [.pm25: 8.4e-6, .pm10: 14.2e-6, .ozone: 118e-6, .nitrogenDioxide: 12.3e-6],
        pollen: [.grass: 35.2, .birch: 0])

    func testThePlacePageShowsTheIndicesWithTheirBandsAndOnlyPollenThereIs() throws {
        let pages = try render()
        let berlin = String(buffer: try XCTUnwrap(pages.places["Berlin"]))
        XCTAssertTrue(berlin.contains(#"<dt>European AQI</dt><dd><span class="aqi aqi-eu-3">58</span> moderate</dd>"#))
        XCTAssertTrue(berlin.contains(#"<dt>US AQI (EPA)</dt><dd><span class="aqi aqi-us-2">63</span> moderate</dd>"#))
        XCTAssertTrue(berlin.contains("<dt>Ozone</dt><dd>118.0 µg/m³</dd>"))
        XCTAssertTrue(berlin.contains("<dt>Grass</dt><dd>35.2 grains/m³</dd>"))
        XCTAssertFalse(berlin.contains("Birch"), "a plant with no pollen in the air is not listed")
        XCTAssertFalse(berlin.contains("Sulphur"), "a pollutant without a value is not listed")
        let oslo = String(buffer: try XCTUnwrap(pages.places["Oslo"]))
        XCTAssertFalse(oslo.contains(#"aria-labelledby="air""#), "a stale report is not shown")
        let failed =
            #"<p class="problem" dir="auto">Air quality: the last refresh failed (open-meteo-air-quality: HTTP 503); no values to show</p>"#
        XCTAssertTrue(oslo.contains(failed), "but its source's failure is")
        XCTAssertFalse(berlin.contains(#"class="problem""#))
        let landing = String(buffer: pages.landing)
        XCTAssertTrue(landing.contains(#"<p class="air">Air <span class="aqi aqi-eu-3">58</span> moderate</p>"#))
        XCTAssertEqual(landing.components(separatedBy: #"<p class="air">"#).count, 2, "only Berlin's is fresh")
    }

    /// A fresh answer with no value for the place (every field null) says so, rather than an
    /// empty list under the heading.
    func testAFreshAnswerWithoutValuesSaysSo() throws {
        var (config, statuses) = fixedState()
        statuses[0].airQuality = AirQualityStatus(
            report: AirQualityReport(observedAt: PlaceSnapshots.observedAt), lastSuccess: Self.now - 60,
            lastAttempt: Self.now - 60)
        config.warnings = WarningSettings()
        let pages = HTMLPages(
            config: config, statuses: statuses, readiness: Readiness(statuses), telemetryPath: "/metrics", now: Self.now
        )
        let berlin = String(buffer: try XCTUnwrap(pages.places["Berlin"]))
        XCTAssertTrue(berlin.contains("<p>The source's last answer has no values for this place.</p>"), berlin)
        XCTAssertFalse(berlin.contains(#"<dl class="readings"></dl>"#))
    }

    func testBandsFollowTheEuropeanAndEPAScales() {
        let european = [0.0, 20, 20.5, 40, 59, 60.2, 80, 100, 101, 250].map { AirQualityViewModel.european($0)?.band }
        XCTAssertEqual(
            european,
            [
                "good", "good", "fair", "fair", "moderate", "poor", "poor", "very poor", "extremely poor",
                "extremely poor",
            ])
        let epa = [0.0, 50, 50.4, 50.5, 100, 101, 151, 201, 301, 600].map { AirQualityViewModel.epa($0)?.band }
        XCTAssertEqual(
            epa,
            [
                "good", "good", "good", "moderate", "moderate", "unhealthy for sensitive groups", "unhealthy",
                "very unhealthy", "hazardous", "hazardous",
            ])
        XCTAssertNil(AirQualityViewModel.european(nil))
        XCTAssertNil(AirQualityViewModel.epa(-1), "no band for a value no scale has")
        XCTAssertEqual(AirQualityViewModel.european(101)?.bandClass, "aqi-eu-6")
    }

    func testWithoutAirQualityInTheConfigNoPageShowsAny() {
        let (fixedConfig, statuses) = fixedState()
        var config = fixedConfig
        config.airQuality = nil
        let pages = HTMLPages(
            config: config, statuses: statuses, readiness: Readiness(statuses), telemetryPath: "/metrics", now: Self.now
        )
        XCTAssertFalse(String(buffer: pages.landing).contains(#"class="air""#))
        XCTAssertFalse(String(buffer: pages.places["Berlin"]!).contains("Air quality"))
    }

    /// Berlin under DWD's wind gusts (12h), Oslo under MET Norway's two warnings.
    func render() throws -> HTMLPages {
        let (config, statuses) = fixedState()
        let board = try WarningFixtures.board([("Berlin", .dwd), ("Oslo", .metNorway)], at: Self.now - 60)
        let warnings = statuses.map {
            PlaceWarnings(
                status: $0, settings: config.warnings, provider: config.provider.name, board: board, now: Self.now,
                staleAfter: config.refresh.staleAfter)
        }
        return HTMLPages(
            config: config, statuses: statuses, warnings: warnings, readiness: Readiness(statuses),
            telemetryPath: "/metrics", now: Self.now)
    }

    func testLandingAndPlacePagesMatchTheGoldenFiles() throws {
        let pages = try render()
        try compare(pages.landing, golden: "landing.html")
        try compare(XCTUnwrap(pages.places["Berlin"]), golden: "place-berlin.html")
        try compare(XCTUnwrap(pages.places["Lima"]), golden: "place-lima-stale.html")
    }

    func testHostileNamesAreEscapedInTextAndLinks() throws {
        let pages = try render()
        let landing = String(buffer: pages.landing)
        XCTAssertFalse(landing.contains("<script>"), "a name is text, never markup")
        XCTAssertTrue(landing.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(landing.contains("&quot;quoted&quot; &amp; &#39;single&#39;"))
        XCTAssertTrue(landing.contains(">Zürich ☁️🌧<"), "non-ASCII stays as it is")
        XCTAssertTrue(landing.contains(">القاهرة (Cairo)<"))
        XCTAssertTrue(landing.contains("href=\"/places/a%2Fb%2F..%2Fc\""), "one path segment")
        XCTAssertTrue(landing.contains("href=\"/places/%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""))
        XCTAssertTrue(landing.contains("met-norway: HTTP 429 &lt;too many&gt;"), "provider text is escaped too")
        for name in Self.hostileNames {
            let page = String(buffer: try XCTUnwrap(pages.places[name], name))
            XCTAssertFalse(page.contains("<script>"), name)
            XCTAssertFalse(page.contains("'single'"), name)
            XCTAssertTrue(page.contains("<h1 dir=\"auto\">"), name)
        }
    }

    func testEveryPageIsSelfContainedWithoutScript() throws {
        let pages = try render()
        for page in [pages.landing, pages.notFound] + pages.places.names.compactMap({ pages.places[$0] }) {
            let html = String(buffer: page)
            XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
            XCTAssertFalse(html.lowercased().contains("<script"))
            XCTAssertFalse(html.contains(" style=\""), "inline style would need 'unsafe-inline'")
            XCTAssertFalse(html.contains("<style"), "the stylesheet is its own file")
            // The only absolute URL is the SVG namespace, which is a name, never loaded.
            XCTAssertEqual(html.components(separatedBy: "http").count - 1, 1)
            for icon in html.components(separatedBy: "href=\"#i-").dropFirst() {
                let name = String(icon.prefix { $0 != "\"" })
                XCTAssertTrue(WeatherIcons.names.contains(name), name)
                XCTAssertTrue(html.contains("<symbol id=\"i-\(name)\""), name)
            }
        }
        for name in WeatherIcons.names {
            XCTAssertTrue(WeatherIcons.sprite.contains("<symbol id=\"i-\(name)\""), name)
        }
    }

    func testEveryConditionHasAnIcon() {
        for code in 0...99 {
            for isDay in [true, false] {
                let icon = WeatherCondition(code: code, isDay: isDay).icon
                XCTAssertTrue(WeatherIcons.names.contains(icon), "code \(code): \(icon)")
            }
        }
    }

    func testAPlaceWaitingForItsFirstRefreshHasAPageWithoutWeather() throws {
        let page = String(buffer: try XCTUnwrap(render().places["Springfield"]))
        XCTAssertTrue(
            page.contains("<span class=\"badge\">waiting</span> <span dir=\"auto\">waiting for the first refresh"))
        XCTAssertTrue(page.contains("No weather to show for this place now."))
        XCTAssertFalse(page.contains("class=\"week\""))
    }

    /// Pages are rendered when first asked for, but from the state of their rendering: a refresh
    /// recorded since (not yet rendered) does not show, the next rendering does.
    func testPagesShowTheStateOfTheirRenderingWhenReadLater() throws {
        let store = try makeServerTestStore(.ready)
        let berlin = try XCTUnwrap(store.config.places.first)
        store.record(
            [(place: berlin, location: nil, outcome: .failure(WeatherFetchError("open-meteo: HTTP 500")))],
            at: 1_781_525_800)
        let before = store.rendered.html
        XCTAssertTrue(
            String(buffer: try XCTUnwrap(before.places["Berlin"])).contains("<span class=\"badge\">up</span>"))
        XCTAssertFalse(String(buffer: before.landing).contains("HTTP 500"))
        store.render(now: 1_781_525_820)
        let after = store.rendered.html
        XCTAssertTrue(String(buffer: try XCTUnwrap(after.places["Berlin"])).contains("open-meteo: HTTP 500"))
        XCTAssertTrue(String(buffer: after.landing).contains("open-meteo: HTTP 500"))
        XCTAssertNil(after.places["Paris"], "no page for a name no place has")
    }

    /// More places than pages kept: every page is still answered, byte for byte what a rendering
    /// of its own gives, and the kept ones stay the same bytes.
    func testPagesPastTheKeptOnesAreRenderedOnEachRequest() throws {
        let count = PlacePages.keptPages + 6
        let places = (0..<count).map { Place(name: "Place \($0)", latitude: 1, longitude: 1) }
        let statuses = places.map {
            PlaceStatus(
                place: $0, snapshot: PlaceSnapshots.full, lastSuccess: Self.now - 60, lastAttempt: Self.now - 60)
        }
        let config = Config(forecast: ForecastSettings(days: 3, hours: 2), places: places)
        func pages() -> HTMLPages {
            HTMLPages(
                config: config, statuses: statuses, readiness: Readiness(statuses), telemetryPath: "/metrics",
                now: Self.now)
        }
        let served = pages()
        for place in places {
            let first = try XCTUnwrap(served.places[place.name])
            XCTAssertEqual(first, try XCTUnwrap(served.places[place.name]), place.name)
            XCTAssertEqual(first, try XCTUnwrap(pages().places[place.name]), place.name)
            XCTAssertTrue(String(buffer: first).contains("<h1 dir=\"auto\">\(place.name)</h1>"), place.name)
        }
        XCTAssertEqual(served.places.keptCount, PlacePages.keptPages)
        XCTAssertEqual(served.places.names, places.map(\.name))
    }

    /// The kept pages are the ones read most recently: a page read again stays kept while pages
    /// past the limit are asked for, and the least recently read one is let go first (the first
    /// 64 pages asked for used to be kept for good, and every other page rendered on each request).
    func testKeptPagesAreTheMostRecentlyReadOnes() throws {
        let count = PlacePages.keptPages + 3
        let places = (0..<count).map { Place(name: "Place \($0)", latitude: 1, longitude: 1) }
        let statuses = places.map {
            PlaceStatus(
                place: $0, snapshot: PlaceSnapshots.full, lastSuccess: Self.now - 60, lastAttempt: Self.now - 60)
        }
        let pages = HTMLPages(
            config: Config(forecast: ForecastSettings(days: 3, hours: 2), places: places), statuses: statuses,
            readiness: Readiness(statuses), telemetryPath: "/metrics", now: Self.now
        ).places
        let names = places.map(\.name)
        for name in names.prefix(PlacePages.keptPages) { _ = try XCTUnwrap(pages[name]) }
        XCTAssertEqual(pages.keptNames, Array(names.prefix(PlacePages.keptPages)))
        let first = try XCTUnwrap(pages[names[0]])  // read again: now the most recent
        _ = try XCTUnwrap(pages[names[PlacePages.keptPages]])
        XCTAssertEqual(pages.keptCount, PlacePages.keptPages)
        XCTAssertFalse(pages.keptNames.contains(names[1]), "the least recently read page is let go")
        XCTAssertTrue(pages.keptNames.contains(names[0]), "the page read again stays")
        XCTAssertEqual(pages.keptNames.suffix(2), [names[0], names[PlacePages.keptPages]])
        _ = try XCTUnwrap(pages[names[PlacePages.keptPages + 1]])
        XCTAssertEqual(pages.keptNames.first, names[3], "then the next least recently read")
        XCTAssertFalse(pages.keptNames.contains(names[2]))
        XCTAssertEqual(try XCTUnwrap(pages[names[0]]), first, "a kept page is the same bytes")
        XCTAssertEqual(pages.keptNames.last, names[0])
        _ = try XCTUnwrap(pages[names[1]])  // let go, asked again: rendered and kept again
        XCTAssertEqual(pages.keptNames.last, names[1])
        XCTAssertEqual(pages.keptCount, PlacePages.keptPages)
    }

    func compare(_ buffer: ByteBuffer, golden name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try assertMatchesGolden(Array(buffer.readableBytesView), golden: name, file: file, line: line)
    }
}
