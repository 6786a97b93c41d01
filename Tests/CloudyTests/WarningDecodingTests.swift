import XCTest

@testable import Cloudy

/// The three warning services' answers (the reference's fixtures) decoded into warnings: ids,
/// CAP severity from each service's own field, times in UTC, updates and tests handled.
final class WarningDecodingTests: XCTestCase {
    func decode<T: Decodable>(_ type: T.Type, _ fixture: String) throws -> T {
        try WeatherAPI.decode(type, from: try TestPaths.fixtureBytes(fixture), as: fixture).get()
    }

    func testNWSUpdateKeepsTheIdOfTheMessageItUpdatesAndTheHazardsWindow() throws {
        let warnings = try decode(NWSAlerts.self, "nws-alerts-active.json").warnings
        XCTAssertEqual(warnings.count, 2)
        let heat = warnings[0]
        XCTAssertEqual(heat.id, "urn:oid:2.49.0.1.840.0.c3075e017a7536cd31fcb71ca26acb6b3bc8c712.001.1")
        XCTAssertEqual(heat.source, "nws")
        XCTAssertEqual(heat.event, "Heat Advisory")
        XCTAssertEqual(heat.severity, .moderate)
        XCTAssertEqual(heat.urgency, "expected")
        XCTAssertEqual(heat.certainty, "likely")
        XCTAssertEqual(heat.sender, "NWS Upton NY")
        XCTAssertEqual(heat.onset, ISOTime.parse("2026-06-16T16:00:00Z"), "onset, -04:00 made UTC")
        XCTAssertEqual(heat.expires, ISOTime.parse("2026-06-18T00:00:00Z"), "ends, not the message's expires")
        XCTAssertTrue(heat.headline.hasPrefix("Heat Advisory issued June 15"))
        let air = warnings[1]
        XCTAssertEqual(air.id, "urn:oid:2.49.0.1.840.0.57ac9820946758545e00659f1c751c5841ee729d.001.1")
        XCTAssertEqual(air.severity, .unknown)
        XCTAssertEqual(air.urgency, "unknown")
        XCTAssertEqual(air.instruction, "", "null instruction")
        XCTAssertEqual(air.expires, ISOTime.parse("2026-06-16T03:00:00Z"), "no ends: the message's expires")
        XCTAssertEqual(try decode(NWSAlerts.self, "nws-alerts-empty.json").warnings, [])
    }

    func testNWSDropsReplacedCancelledAndTestMessages() throws {
        let body = """
            {"features":[
            {"properties":{"id":"a","status":"Actual","messageType":"Alert","event":"Wind","severity":"Severe"}},
            {"properties":{"id":"b","status":"Actual","messageType":"Update","event":"Wind","severity":"Extreme",
             "references":[{"identifier":"a","sent":"2026-06-15T10:00:00-04:00"}]}},
            {"properties":{"id":"c","status":"Actual","messageType":"Cancel","event":"Flood"}},
            {"properties":{"id":"d","status":"Test","messageType":"Alert","event":"Test"}}]}
            """
        let warnings = try WeatherAPI.decode(NWSAlerts.self, from: Array(body.utf8), as: "nws").get().warnings
        XCTAssertEqual(warnings.map(\.id), ["a"], "the update under the id of the alert it replaces")
        XCTAssertEqual(warnings.map(\.severity), [.extreme], "with the update's contents")
    }

    /// Two in force from one original (a Wind Advisory and the High Wind Warning it grew into,
    /// both listed) are two warnings under their own ids, in either order; neither hides the
    /// other. A message that names no sender has an empty one.
    func testNWSTwoUpdatesOfOneMessageInForceStayTwoWarnings() throws {
        func update(_ id: String, _ event: String, _ severity: String) -> String {
            #"{"properties":{"id":""# + id + #"","status":"Actual","messageType":"Update","event":""# + event
                + #"","severity":""# + severity
                + #"","references":[{"identifier":"o","sent":"2026-06-15T10:00:00-04:00"}]}}"#
        }
        let advisory = update("e", "Wind Advisory", "Moderate")
        let warning = update("f", "High Wind Warning", "Severe")
        for features in [[advisory, warning], [warning, advisory]] {
            let body = #"{"features":["# + features.joined(separator: ",") + "]}"
            let warnings = try WeatherAPI.decode(NWSAlerts.self, from: Array(body.utf8), as: "nws").get().warnings
            XCTAssertEqual(
                Set(warnings.map { $0.id + " " + $0.event }), ["e Wind Advisory", "f High Wind Warning"])
            XCTAssertEqual(Set(warnings.map(\.severity)), [.moderate, .severe])
            XCTAssertEqual(warnings.map(\.sender), ["", ""])
        }
    }

    func testMETNorwayColoursBecomeCAPSeverityByItsOwnSeverityField() throws {
        let warnings = try decode(METAlerts.self, "met-norway-metalerts.json").warnings
        XCTAssertEqual(warnings.map(\.id), ["2.49.0.1.578.0.20260615064512.018", "2.49.0.1.578.0.20260614093012.041"])
        XCTAssertEqual(warnings.map(\.severity), [.moderate, .severe], "yellow, orange")
        XCTAssertEqual(warnings.map(\.event), ["Lightning", "High forest fire danger"])
        XCTAssertEqual(warnings[0].onset, ISOTime.parse("2026-06-15T12:00:00Z"))
        XCTAssertEqual(warnings[0].expires, ISOTime.parse("2026-06-15T21:00:00Z"))
        XCTAssertEqual(warnings[1].certainty, "likely")
        XCTAssertEqual(warnings[1].sender, "MET Norway")
        XCTAssertTrue(warnings[1].instruction.hasPrefix("Take great care"))
        XCTAssertEqual(try decode(METAlerts.self, "met-norway-metalerts-empty.json").warnings, [])
        XCTAssertEqual(METAlerts.severity(level: "4; red; Extreme"), .extreme, "the level without a severity field")
        XCTAssertEqual(METAlerts.severity(level: "3; orange; Severe"), .severe)
        XCTAssertEqual(METAlerts.severity(level: nil), .unknown)
    }

    /// The window ends when the hazard does (`eventEndingTime`), not when the message expires,
    /// as NWS's ends at `ends`; a warning without one (forest fire danger) ends at the message's.
    func testMETNorwayWarningsEndWithTheHazard() throws {
        let body =
            #"{"features":[{"properties":{"id":"l","status":"Actual","event":"lightning","#
            + #""severity":"Moderate","eventEndingTime":"2026-06-15T14:00:00+00:00"},"#
            + #""when":{"interval":["2026-06-15T11:00:00+00:00","2026-06-15T22:00:00+00:00"]}},"#
            + #"{"properties":{"id":"f","status":"Actual","event":"forestFire","severity":"Severe"},"#
            + #""when":{"interval":["2026-06-14T10:00:00+00:00","2026-06-18T22:00:00+00:00"]}}]}"#
        let warnings = try WeatherAPI.decode(METAlerts.self, from: Array(body.utf8), as: "met").get().warnings
        XCTAssertEqual(
            warnings.map(\.expires), [ISOTime.parse("2026-06-15T14:00:00Z"), ISOTime.parse("2026-06-18T22:00:00Z")])
    }

    /// A downgrade to green says the danger is over: no warning, whether MET gives the level or
    /// only CAP's `Minor` (which it sends only for downgrades).
    func testMETNorwayAllClearsAreNoWarnings() throws {
        func feature(_ id: String, _ properties: String) -> String {
            #"{"properties":{"id":"\#(id)","status":"Actual","event":"rain",\#(properties)},"#
                + #""when":{"interval":["2026-10-31T09:00:00+00:00","2026-10-31T10:00:00+00:00"]}}"#
        }
        let body =
            #"{"type":"FeatureCollection","features":["#
            + [
                feature("green", #""awareness_level":"1; green; Minor","severity":"Minor""#),
                feature("minor", #""severity":"Minor""#),
                feature("yellow", #""awareness_level":"2; yellow; Moderate","severity":"Moderate""#),
                feature("yellow-minor", #""awareness_level":"2; yellow; Moderate","severity":"Minor""#),
            ].joined(separator: ",") + "]}"
        let warnings = try WeatherAPI.decode(METAlerts.self, from: Array(body.utf8), as: "met-norway").get().warnings
        XCTAssertEqual(warnings.map(\.id), ["yellow", "yellow-minor"], "the level decides when MET gives it")
    }

    func testDWDLevelsThroughBrightSkysSeverity() throws {
        let warnings = try decode(BrightSkyAlerts.self, "brightsky-alerts.json").warnings
        XCTAssertEqual(warnings.count, 1)
        let gusts = warnings[0]
        XCTAssertEqual(gusts.id, "2.49.0.0.276.0.DWD.PVW.1781518320000.079cce9d-6c39-4cfb-ad25-143ac9bbda2c")
        XCTAssertEqual(gusts.severity, .minor, "DWD level 1")
        XCTAssertEqual(gusts.event, "wind gusts")
        XCTAssertEqual(gusts.headline, "Official WARNING of WIND GUSTS")
        XCTAssertEqual(gusts.instruction, "")
        XCTAssertEqual(gusts.urgency, "immediate")
        XCTAssertEqual(gusts.onset, ISOTime.parse("2026-06-15T13:00:00+00:00"))
        XCTAssertEqual(gusts.expires, 1_781_550_000)
        XCTAssertTrue(
            BrightSkyAlerts.isOutsideGermany(try TestPaths.fixtureBytes("brightsky-alerts-outside-germany.json")))
        XCTAssertFalse(BrightSkyAlerts.isOutsideGermany(Array(#"{"detail":"Not Found"}"#.utf8)))
    }

    func testISOTimesWithOffsetsFractionsAndZuluAndNothingElse() {
        XCTAssertEqual(ISOTime.parse("2026-06-15T12:00:00Z"), 1_781_524_800)
        XCTAssertEqual(ISOTime.parse("2026-06-15T08:00:00-04:00"), 1_781_524_800)
        XCTAssertEqual(ISOTime.parse("2026-06-15T14:00:00.250+02:00"), 1_781_524_800)
        for bad in [
            "", "2026-06-15", "2026-06-15T12:00:00", "2026-13-15T12:00:00Z", "2026-06-15T12:00:00+0200",
            "2026-06-15T12:00:00Zjunk", "２０２６-06-15T12:00:00Z",
        ] {
            XCTAssertNil(ISOTime.parse(bad), bad)
        }
    }
}

extension WarningDecodingTests {
    /// Urgency and certainty are CAP's words in lowercase, whatever case the source writes; a
    /// word CAP does not have is `unknown`, so the labels keep CAP's set.
    func testUrgencyAndCertaintyAreCAPsWordsOrUnknown() {
        let written = WeatherWarning(
            id: "a", source: "dwd", event: "Wind", severity: .severe, urgency: "Immediate", certainty: "LIKELY")
        XCTAssertEqual([written.urgency, written.certainty], ["immediate", "likely"])
        let other = WeatherWarning(
            id: "b", source: "nws", event: "Wind", severity: .severe, urgency: "soon", certainty: "sure")
        XCTAssertEqual([other.urgency, other.certainty], ["unknown", "unknown"])
        // Spaces and line breaks around a word are not part of it.
        let padded = WeatherWarning(
            id: "c", source: "nws", event: "Wind", severity: WarningSeverity(cap: "Severe\n"), urgency: " Expected",
            certainty: "\tPossible \r\n")
        XCTAssertEqual(padded.severity, .severe)
        XCTAssertEqual([padded.urgency, padded.certainty], ["expected", "possible"])
        XCTAssertEqual(WarningSeverity(cap: " \n"), .unknown)
    }
}
