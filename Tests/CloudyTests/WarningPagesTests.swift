import Foundation
import XCTest

@testable import Cloudy

/// The warnings on `/metrics` and the HTML pages, rendered with the page (never per scrape):
/// the contract's series, a count for every severity, texts on one line within 200 characters,
/// a hostile headline harmless everywhere, no series for a place outside every area.
final class WarningPagesTests: XCTestCase {
    let now = 1_781_525_000.0
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006, timezone: "America/New_York")
    let brussels = Place(name: "Brussels", latitude: 50.85, longitude: 4.35)

    func render(_ board: WarningBoard, places: [Place], settings: WarningSettings = WarningFixtures.allSources)
        -> RenderedPages
    {
        var config = Config(places: places)
        config.warnings = settings
        let statuses = places.map { PlaceStatus(place: $0, lastAttempt: now - 60, lastError: "open-meteo: timeout") }
        return RenderedPages(
            config: config, statuses: statuses, warnings: board, telemetry: ExporterTelemetry(startedAt: 0).read(),
            telemetryPath: "/metrics", now: now, processMetrics: { MetricFamilies() })
    }

    func text(_ pages: RenderedPages) -> String { String(buffer: pages.metrics.prometheus) }

    func warningLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("weather_warning") }
    }

    func testSeriesAsTheContractSaysThem() throws {
        let board = try WarningFixtures.board([("New York", .nws)], at: now - 60)
        let lines = warningLines(text(render(board, places: [newYork, brussels])))
        let heatID = "urn:oid:2.49.0.1.840.0.c3075e017a7536cd31fcb71ca26acb6b3bc8c712.001.1"
        let airID = "urn:oid:2.49.0.1.840.0.57ac9820946758545e00659f1c751c5841ee729d.001.1"
        XCTAssertEqual(
            lines,
            [
                #"weather_warning_expires_timestamp_seconds{location="New York",source="nws",id="\#(heatID)"} 1781740800"#,
                #"weather_warning_expires_timestamp_seconds{location="New York",source="nws",id="\#(airID)"} 1781578800"#,
                #"weather_warning_info{location="New York",source="nws",id="\#(heatID)",event="Heat Advisory",severity="moderate",urgency="expected",certainty="likely",headline="Heat Advisory issued June 15 at 4:02AM EDT until June 17 at 8:00PM EDT by NWS Upton NY",sender="NWS Upton NY"} 1"#,
                #"weather_warning_info{location="New York",source="nws",id="\#(airID)",event="Air Quality Alert",severity="unknown",urgency="unknown",certainty="unknown",headline="Air Quality Alert issued June 15 at 3:55AM EDT by NWS Upton NY",sender="NWS Upton NY"} 1"#,
                #"weather_warning_onset_timestamp_seconds{location="New York",source="nws",id="\#(heatID)"} 1781625600"#,
                #"weather_warning_onset_timestamp_seconds{location="New York",source="nws",id="\#(airID)"} 1781510100"#,
                #"weather_warnings{location="New York",severity="extreme"} 0"#,
                #"weather_warnings{location="New York",severity="severe"} 0"#,
                #"weather_warnings{location="New York",severity="moderate"} 1"#,
                #"weather_warnings{location="New York",severity="minor"} 0"#,
                #"weather_warnings{location="New York",severity="unknown"} 1"#,
                #"weather_warnings_up{location="New York",source="nws"} 1"#,
            ], "Brussels, outside every area, has no warning series")
    }

    /// An answer with no warning is 0 for every severity, and stays so while a later ask fails
    /// (the list is kept until stale). Before the first answer, and once the list is stale, how
    /// many are in force is not known: no count, only weather_warnings_up.
    func testNoWarningIsZeroForEverySeverityWhileAListIsKnown() throws {
        func counts(_ board: WarningBoard) -> [String] {
            warningLines(text(render(board, places: [newYork]))).filter { $0.hasPrefix("weather_warnings{") }
        }
        var board = WarningBoard()
        board.record(place: "New York", source: "nws", .failure(WeatherFetchError("nws: HTTP 503")), at: now - 60)
        XCTAssertEqual(counts(board), [], "never answered")
        let lines = warningLines(text(render(board, places: [newYork])))
        XCTAssertTrue(lines.contains(#"weather_warnings_up{location="New York",source="nws"} 0"#))
        XCTAssertFalse(lines.contains { $0.hasPrefix("weather_warning_info") })

        board.record(place: "New York", source: "nws", .success([]), at: now - 120)
        board.record(place: "New York", source: "nws", .failure(WeatherFetchError("nws: HTTP 503")), at: now - 60)
        XCTAssertEqual(counts(board).map { $0.hasSuffix(" 0") }, Array(repeating: true, count: 5), "the kept list")

        var stale = WarningBoard()
        stale.record(place: "New York", source: "nws", .success([]), at: now - 86_400 * 30)
        XCTAssertEqual(counts(stale), [], "the last list is stale")
    }

    /// Quotes, backslashes, newlines, markup and 5,000 characters in every text a source sends.
    func testAHostileWarningBreaksNothing() throws {
        let hostile =
            "\"quoted\" \\back\\slash\nnew line\r\n<script>alert(1)</script> & \u{7}bell\ttab "
            + String(repeating: "long ", count: 1000)
        var board = WarningBoard()
        let warning = WeatherWarning(
            id: "id \"1\"\n", source: "nws", event: hostile, severity: .extreme, urgency: hostile,
            certainty: "likely", headline: hostile, description: hostile, instruction: hostile, sender: hostile,
            onset: now - 600, expires: now + 600)
        board.record(place: "New York", source: "nws", .success([warning]), at: now - 60)
        let pages = render(board, places: [newYork])
        let text = text(pages)
        let info = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("weather_warning_info") })
        let headline = try XCTUnwrap(info.range(of: #"headline=""#)).upperBound
        let value = info[headline...].dropLast(#"" 1"#.count)
        XCTAssertTrue(value.hasPrefix(#"\"quoted\" \\back\\slash new line <script>"#), String(value.prefix(80)))
        XCTAssertFalse(value.contains("\u{7}"), "control characters dropped")
        XCTAssertTrue(info.contains(#",sender="\"quoted\" \\back\\slash new line <script>"#), "sender escaped too")
        XCTAssertTrue(value.contains("& bell tab long"), "a tab is white space like any other")
        XCTAssertEqual(WarningFamilies.label(hostile).count, 200, "at most 200 characters")
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(text.utf8))
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stdout + result.stderr, "", "promtool finds nothing")

        let page = String(buffer: try XCTUnwrap(pages.html.places["New York"]))
        XCTAssertFalse(page.contains("<script>alert"), "escaped")
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(String(buffer: pages.html.landing).contains(#"class="warning-mark warning-extreme""#))
    }

    /// A failing warning source says so on the card and the page, and whether the warnings shown
    /// are its older answer or none is known.
    func testAFailingSourceSaysWhetherItsWarningsAreKept() throws {
        let failed = Result<[WeatherWarning], WeatherFetchError>.failure(WeatherFetchError("nws: HTTP 503"))
        var board = try WarningFixtures.board([("New York", .nws)], at: now - 720)
        board.record(place: "New York", source: "nws", failed, at: now - 60)
        let pages = render(board, places: [newYork])
        let kept =
            #"<p class="problem" dir="auto">Warnings from nws: the last refresh failed (nws: HTTP 503); the warnings shown are from its answer of 12 min ago</p>"#
        XCTAssertTrue(String(buffer: pages.html.landing).contains(kept))
        let page = String(buffer: try XCTUnwrap(pages.html.places["New York"]))
        XCTAssertTrue(page.contains(kept) && page.contains("Heat Advisory"), "the kept warnings stay, marked")

        var stale = try WarningFixtures.board([("New York", .nws)], at: now - 86_400)
        stale.record(place: "New York", source: "nws", failed, at: now - 60)
        XCTAssertTrue(
            String(buffer: render(stale, places: [newYork]).html.landing).contains(
                "Warnings from nws: the last refresh failed (nws: HTTP 503); whether any are in force is not known"))

        board.record(place: "New York", source: "nws", .success([]), at: now - 30)
        XCTAssertFalse(String(buffer: render(board, places: [newYork]).html.landing).contains(#"class="problem""#))
    }

    /// Invisible format characters make two labels that read alike differ: they go, except the
    /// joiners that scripts and emoji need.
    func testALabelKeepsNoInvisibleCharacters() {
        XCTAssertEqual(
            WarningFamilies.label("Wind\u{200B} Advisory\u{FEFF}\u{2060} for\u{00AD}\u{200E} \u{202E}coast"),
            "Wind Advisory for coast")
        XCTAssertEqual(WarningFamilies.label("\u{200B}"), "", "nothing left to show")
        XCTAssertEqual(WarningFamilies.label("می\u{200C}شود 🌩\u{200D}"), "می\u{200C}شود 🌩\u{200D}", "joiners stay")
    }

    func testThePlacePageListsEachWarningInThePlacesTimeAndNotation() throws {
        let board = try WarningFixtures.board([("New York", .nws)], at: now - 60)
        var twelve = newYork
        twelve.units.time = .h12
        let page = String(buffer: try XCTUnwrap(render(board, places: [twelve]).html.places["New York"]))
        XCTAssertTrue(page.contains(#"<article class="warning warning-moderate">"#))
        XCTAssertTrue(page.contains("Heat Advisory"))
        XCTAssertTrue(page.contains("<dd>Tue 16 Jun 12:00 PM</dd>"), "onset in New York's time, 12h")
        XCTAssertTrue(page.contains("<dd>Wed 17 Jun 8:00 PM</dd>"), "the hazard's end")
        XCTAssertTrue(page.contains("NWS Upton NY via nws"))
        let landing = String(buffer: render(board, places: [twelve, brussels]).html.landing)
        XCTAssertTrue(landing.contains("2 warnings: Heat Advisory, Air Quality Alert"))
        XCTAssertEqual(landing.components(separatedBy: "warning-mark").count - 1, 1, "Brussels has no mark")
    }

    func testAnOpenEndedWarningIsInForceUntilFurtherNotice() throws {
        var board = WarningBoard()
        let open = WeatherWarning(id: "n-1", source: "nws", event: "Wind", severity: .severe, onset: now - 600)
        board.record(place: "New York", source: "nws", .success([open]), at: now - 60)
        let page = String(buffer: try XCTUnwrap(render(board, places: [newYork]).html.places["New York"]))
        XCTAssertTrue(page.contains("<div><dt>Until</dt><dd>further notice</dd></div>"), page)
        XCTAssertTrue(page.contains("US National Weather Service via nws"), "no office named: the service")
    }

    func testAlertsCarriedInTheWeatherAnswerAreASourceToo() throws {
        var config = Config(provider: ProviderSettings(name: .openWeatherMap), places: [brussels])
        config.warnings = WarningSettings()
        let carried = WeatherWarning(
            id: "owm-1", source: "openweathermap", event: "Wind", severity: .unknown, onset: now - 600,
            expires: now + 600)
        let snapshot = WeatherSnapshot(current: CurrentConditions(), warnings: [carried, carried])
        let status = PlaceStatus(place: brussels, snapshot: snapshot, lastSuccess: now - 60, lastAttempt: now - 60)
        let render = { (at: Double) in
            String(
                buffer: RenderedPages(
                    config: config, statuses: [status], telemetry: ExporterTelemetry(startedAt: 0).read(),
                    telemetryPath: "/metrics", now: at, processMetrics: { MetricFamilies() }
                ).metrics.prometheus)
        }
        let lines = warningLines(render(now))
        XCTAssertTrue(lines.contains(#"weather_warnings_up{location="Brussels",source="openweathermap"} 1"#))
        XCTAssertEqual(lines.filter { $0.hasPrefix("weather_warning_info") }.count, 1, "listed twice, one series")
        XCTAssertTrue(
            lines.contains {
                $0.hasPrefix(#"weather_warning_info{location="Brussels",source="openweathermap",id="owm-1""#)
            })
        XCTAssertFalse(warningLines(render(now + 600)).contains { $0.hasPrefix("weather_warning_info") }, "expired")
    }
}
