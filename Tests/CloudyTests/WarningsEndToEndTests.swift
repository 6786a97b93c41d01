import Foundation
import XCTest

@testable import Cloudy

/// The warning sources on the real binary's scheduler against the fake services (a real process):
/// warnings on `/metrics` and the pages for the places in a source's area, an update replacing an
/// alert, an expiry while still listed, a source down, a place outside every area never asked, a
/// reload adding and removing a source, a hostile headline that promtool still finds clean.
final class WarningsEndToEndTests: FakeWeatherTestCase {
    /// Göttingen is in DWD's area, Moore in NWS's, Sydney in none.
    func config(sources: [String], interval: String = "1s") -> String {
        """
        provider:
          url: \(fake.baseURL)
          user_agent: "cloudy-tests/1.0 ops@example.org"
        refresh:
          interval: 1h
          timeout: 2s
        warnings:
          interval: \(interval)
          sources:
        \(sources.map { "    - { name: \($0), url: \"\(fake.baseURL)\" }" }.joined(separator: "\n"))
        locations:
          - name: Goettingen
            latitude: 51.55
            longitude: 9.9
          - name: Moore
            latitude: 35.34
            longitude: -97.49
          - name: Sydney
            latitude: -33.87
            longitude: 151.21
        """
    }

    /// Has the fake DWD list one alert shaped as Bright Sky's, in force from a minute ago and
    /// expiring in an hour, or with `expiresAfterAnswer`, that many seconds (rounded up to a whole
    /// second) after each answer the fake gives.
    func listDWD(id: String, expiresAfterAnswer: Int? = nil, headline: String = "Official WARNING of FROST") throws {
        let format = ISO8601DateFormatter()
        var alert: [String: Any] = [
            "id": 1, "alert_id": id, "effective": format.string(from: Date() - 60),
            "onset": format.string(from: Date() - 60), "expires": format.string(from: Date() + 3600), "category": "met",
            "response_type": "prepare", "urgency": "immediate", "severity": "moderate", "certainty": "likely",
            "event_code": 22, "event_en": "frost", "event_de": "FROST", "headline_en": headline,
            "headline_de": "Amtliche WARNUNG vor FROST", "description_en": "Frost down to -4 °C.",
            "description_de": "Frost bis -4 °C.", "instruction_en": NSNull(), "instruction_de": NSNull(),
            "status": "actual",
        ]
        if let expiresAfterAnswer {
            alert["expires"] = nil
            alert["expires_in"] = expiresAfterAnswer
        }
        let body = try JSONSerialization.data(withJSONObject: ["source": "dwd", "alerts": [alert]])
        try fake.control("warnings", String(decoding: body, as: UTF8.self))
    }

    /// The `weather_warning_info` series of `place` (their keys, labels and all).
    func infos(_ metrics: [String: Double], _ place: String) -> [String] {
        metrics.keys.filter { $0.hasPrefix("weather_warning_info{location=\"\(place)\"") }.sorted()
    }

    /// The fake's warning requests (DWD's and NWS's) since it started, as "path?query".
    func warningRequests() throws -> [String] {
        try fake.requests().compactMap { request in
            guard let path = request["path"] as? String, path.hasPrefix("/alerts") else { return nil }
            return "\(path)?\(request["query"].map { "\($0)" } ?? "")"
        }
    }

    func testWarningsAppearForThePlacesInAnAreaAndAnUpdateReplacesThem() throws {
        try listDWD(id: "dwd-frost-1")
        try fake.control("warnings", #"{"source":"nws","alerts":[]}"#)
        let exporter = try ExporterProcess(config: config(sources: ["dwd", "nws"]))
        try exporter.waitFor("/readyz")
        var metrics = try exporter.metrics { !self.infos($0, "Goettingen").isEmpty }
        let info = try XCTUnwrap(infos(metrics, "Goettingen").first)
        XCTAssertTrue(info.contains(#"id="dwd-frost-1""#) && info.contains(#"severity="moderate""#), info)
        XCTAssertTrue(info.contains(#"sender="Deutscher Wetterdienst""#), info)
        assertClose(metrics[#"weather_warnings{location="Goettingen",severity="moderate"}"#], 1)
        assertClose(metrics[#"weather_warnings_up{location="Goettingen",source="dwd"}"#], 1)
        metrics = try exporter.metrics { $0[#"weather_warnings_up{location="Moore",source="nws"}"#] == 1 }
        XCTAssertEqual(infos(metrics, "Moore"), [], "NWS lists nothing")
        assertClose(metrics[#"weather_warnings{location="Moore",severity="severe"}"#], 0)

        // Sydney is in no source's area: no series, and never in a request.
        XCTAssertEqual(metrics.keys.filter { $0.hasPrefix("weather_warning") && $0.contains("Sydney") }, [])
        let requests = try warningRequests()
        XCTAssertFalse(requests.isEmpty)
        XCTAssertEqual(requests.filter { $0.contains("-33.87") || $0.contains("151.21") }, [], "\(requests)")

        let landing = String(decoding: try exporter.get("/").body, as: UTF8.self)
        XCTAssertEqual(landing.components(separatedBy: #"class="warning-mark warning-moderate""#).count, 2, "one mark")
        XCTAssertTrue(landing.contains("1 warning: frost"))
        let page = String(decoding: try exporter.get("/places/Goettingen").body, as: UTF8.self)
        XCTAssertTrue(page.contains("Official WARNING of FROST") && page.contains("Deutscher Wetterdienst via dwd"))
        let sydney = String(decoding: try exporter.get("/places/Sydney").body, as: UTF8.self)
        XCTAssertFalse(sydney.contains("Official WARNING of FROST"))

        // DWD re-issues it one level up under a new id: the new one replaces it, one series.
        try fake.control(
            "warnings",
            #"{"source":"dwd","update":{"id":"dwd-frost-1","set":{"alert_id":"dwd-frost-2","severity":"severe"}}}"#
        )
        metrics = try exporter.metrics { self.infos($0, "Goettingen").contains { $0.contains("dwd-frost-2") } }
        let updated = infos(metrics, "Goettingen")
        XCTAssertEqual(updated.count, 1, "\(updated)")
        XCTAssertTrue(updated[0].contains(#"severity="severe""#), updated[0])
        assertClose(metrics[#"weather_warnings{location="Goettingen",severity="moderate"}"#], 0)
        assertClose(metrics[#"weather_warnings{location="Goettingen",severity="severe"}"#], 1)
    }

    /// Asked once an hour: the warning can only leave at its expiry through the feed's re-render
    /// on the recorder's deadline, while the source still lists it. It expires two seconds after
    /// the fake's answer, however long the exporter took to start.
    func testAWarningLeavesAtItsExpiryWhileStillListed() throws {
        try listDWD(id: "dwd-short", expiresAfterAnswer: 2)
        let exporter = try ExporterProcess(config: config(sources: ["dwd"], interval: "1h"))
        try exporter.waitFor("/readyz")
        let seen = try exporter.metrics { !self.infos($0, "Goettingen").isEmpty }
        let expiry = try XCTUnwrap(
            seen.first { $0.key.hasPrefix(#"weather_warning_expires_timestamp_seconds{location="Goettingen""#) })
        let expires = Date(timeIntervalSince1970: expiry.value)
        XCTAssertLessThan(Date(), expires, "seen before its expiry")
        let metrics = try exporter.metrics(timeout: 15) { self.infos($0, "Goettingen").isEmpty }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(expires), -0.05, "gone at its expiry, not before")
        assertClose(metrics[#"weather_warnings_up{location="Goettingen",source="dwd"}"#], 1)
        assertClose(metrics[#"weather_warnings{location="Goettingen",severity="moderate"}"#], 0)
        XCTAssertEqual(try warningRequests().count, 1, "asked once: the expiry, not a new answer, removed it")
    }

    func testASourceDownIsUpZeroAndKeepsItsLastList() throws {
        try listDWD(id: "dwd-kept")
        let exporter = try ExporterProcess(config: config(sources: ["dwd"]))
        try exporter.waitFor("/readyz")
        _ = try exporter.metrics { !self.infos($0, "Goettingen").isEmpty }
        try fake.control("warnings", #"{"source":"dwd","fail":503}"#)
        let metrics = try exporter.metrics { $0[#"weather_warnings_up{location="Goettingen",source="dwd"}"#] == 0 }
        XCTAssertEqual(infos(metrics, "Goettingen").count, 1, "the last list stays while the source is down")
        assertClose(metrics[#"weather_up{location="Goettingen"}"#], 1, "the weather is not held up")
        XCTAssertEqual(try exporter.get("/metrics").status, 200)
    }

    /// The fixture's NWS heat advisory, its hazard ending tomorrow rather than in June.
    func listNWSHeatAdvisory() throws {
        let ends = ISO8601DateFormatter().string(from: Date() + 86400)
        try fake.control(
            "warnings",
            #"{"source":"nws","update":{"id":"urn:oid:2.49.0.1.840.0.a4eeeb9ca753b22e796e934d3502cede7879c42f.001.1","set":{"ends":"\#(ends)","expires":"\#(ends)"}}}"#
        )
    }

    /// A `city:` place is asked once the geocoder has found it inside the area, through the
    /// weather's geocoder: one look-up for both feeds.
    func testACityPlaceIsAskedWhereTheGeocoderFoundIt() throws {
        try listNWSHeatAdvisory()
        let exporter = try ExporterProcess(
            config: """
                provider:
                  url: \(fake.baseURL)
                geocoding:
                  url: \(fake.baseURL)
                refresh:
                  interval: 1h
                warnings:
                  sources:
                    - { name: nws, url: "\(fake.baseURL)" }
                locations:
                  - name: Springfield
                    city: "Springfield, Illinois"
                    country: US
                """)
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics { !self.infos($0, "Springfield").isEmpty }
        XCTAssertTrue(infos(metrics, "Springfield")[0].contains(#"event="Heat Advisory""#))
        XCTAssertEqual(try warningRequests(), ["/alerts/active?[\"point\": \"39.8017,-89.6437\"]"])
        XCTAssertEqual(try fake.requests().filter { ($0["path"] as? String) == "/v1/search" }.count, 1)
    }

    func testAReloadAddsAndRemovesASource() throws {
        try listDWD(id: "dwd-1")
        try listNWSHeatAdvisory()
        let exporter = try ExporterProcess(config: config(sources: ["dwd"]))
        try exporter.waitFor("/readyz")
        var metrics = try exporter.metrics { !self.infos($0, "Goettingen").isEmpty }
        XCTAssertEqual(metrics.keys.filter { $0.hasPrefix("weather_warning") && $0.contains("Moore") }, [])
        XCTAssertFalse(try warningRequests().contains { $0.hasPrefix("/alerts/active") }, "NWS not asked yet")

        try config(sources: ["dwd", "nws"]).write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        metrics = try exporter.metrics { !self.infos($0, "Moore").isEmpty }
        let moore = infos(metrics, "Moore")
        XCTAssertEqual(moore.count, 1, "\(moore)")
        XCTAssertTrue(moore[0].contains(#"source="nws""#) && moore[0].contains(#"sender="NWS Upton NY""#), moore[0])

        try config(sources: ["dwd"]).write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        metrics = try exporter.metrics()
        XCTAssertEqual(
            metrics.keys.filter { $0.hasPrefix("weather_warning") && $0.contains("Moore") }, [],
            "a removed source's series leave with the reload")
        XCTAssertEqual(infos(metrics, "Goettingen").count, 1, "the other source goes on")
    }

    func testAHostileHeadlineLeavesTheExpositionClean() throws {
        let hostile =
            #"A "quoted" \back\slash\"# + "\nnew line\r\n<script>alert(1)</script> "
            + String(repeating: "x", count: 5000)
        try listDWD(id: "dwd-hostile \"1\"\n", headline: hostile)
        let exporter = try ExporterProcess(config: config(sources: ["dwd"]))
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics { !self.infos($0, "Goettingen").isEmpty }
        let info = try XCTUnwrap(infos(metrics, "Goettingen").first)
        XCTAssertTrue(info.contains(#"headline="A \"quoted\" \\back\\slash\\ new line <script>"#), info)
        XCTAssertLessThan(info.count, 1000, "the headline is cut at 200 characters")
        let body = try exporter.get("/metrics").body
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(body))
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout + result.stderr, "")
        let page = String(decoding: try exporter.get("/places/Goettingen").body, as: UTF8.self)
        XCTAssertFalse(page.contains("<script>alert(1)"), "the headline is escaped on the page")
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)"))
    }
}
