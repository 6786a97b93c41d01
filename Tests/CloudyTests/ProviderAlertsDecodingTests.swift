import Foundation
import XCTest

@testable import Cloudy

/// The alerts that OpenWeatherMap's One Call and Dark Sky answers carry, decoded into
/// `WeatherSnapshot.warnings`: [] when the provider carries alerts and none is in force, nil when
/// it carries none.
final class ProviderAlertsDecodingTests: XCTestCase {
    let place = Place(name: "P", latitude: 1, longitude: 2)

    func darkSky(alerts: Any?) throws -> [WeatherWarning]? {
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("pirateweather-forecast.json")) as? [String: Any])
        json["alerts"] = alerts
        return try DarkSkyProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: json)), place: place, settings: ForecastSettings()
        ).get().warnings
    }

    func testDarkSkyAlertBecomesAWarning() throws {
        let warnings = try XCTUnwrap(
            try DarkSkyProvider.decode(
                try TestPaths.fixtureBytes("pirateweather-forecast.json"), place: place, settings: ForecastSettings()
            ).get().warnings)
        XCTAssertEqual(warnings.count, 1)
        let heat = try XCTUnwrap(warnings.first)
        XCTAssertEqual(
            heat.id, "Heat Advisory@1781510520#cd5652e9",
            "the uri is the place's forecast page, not the alert's: title, start and its regions' digest")
        XCTAssertEqual(heat.source, "dark-sky")
        XCTAssertEqual(heat.event, "Heat Advisory")
        XCTAssertEqual(heat.headline, "Heat Advisory")
        XCTAssertEqual(heat.severity, .moderate)
        XCTAssertEqual(heat.onset, 1_781_510_520)
        XCTAssertEqual(heat.expires, 1_781_740_800)
        XCTAssertTrue(heat.description.hasPrefix("* WHAT...Heat index values of 97 to 101"))
        XCTAssertEqual(heat.urgency, "unknown")
        XCTAssertEqual(heat.certainty, "unknown")
    }

    func testDarkSkyWithoutAlertsHasNoneInForceAndDamagedOnesAreSkipped() throws {
        XCTAssertEqual(try darkSky(alerts: []), [])
        XCTAssertEqual(try darkSky(alerts: nil), [], "no alerts key: Dark Sky carries alerts, none in force")
        XCTAssertEqual(try darkSky(alerts: "none"), [], "not a list: the weather stays")
        XCTAssertEqual(try darkSky(alerts: [["severity": "Severe"]]), [], "an alert needs a title")
    }

    func testDarkSkyIdsSeverityWordsOpenEndsAndDuplicates() throws {
        let page = "https://forecast.weather.gov/MapClick.php?lon=-74&lat=40.7"
        let alerts: [[String: Any]] = [
            ["title": "Flood Watch", "severity": "watch", "time": 100, "expires": -999, "uri": page],
            ["title": "Wind Advisory", "severity": "advisory", "time": 200, "expires": 900, "uri": page],
            ["title": "Wind Advisory", "severity": "advisory", "time": 200, "expires": 900, "uri": page],
            ["title": "Tornado Warning", "severity": "warning", "time": 300, "uri": "urn:oid:2.49.0.1.840.0.1"],
            ["title": "Storm", "severity": "Extreme", "time": 400],
            ["title": "Odd", "severity": "purple"],
        ]
        let warnings = try XCTUnwrap(try darkSky(alerts: alerts))
        XCTAssertEqual(
            warnings.map(\.id),
            ["Flood Watch@100", "Wind Advisory@200", "urn:oid:2.49.0.1.840.0.1", "Storm@400", "Odd@-"],
            "a uri shared by several alerts is no id; the duplicate is dropped")
        XCTAssertEqual(warnings.map(\.severity), [.moderate, .minor, .severe, .extreme, .unknown])
        XCTAssertNil(warnings[0].expires, "-999: open-ended")
        XCTAssertEqual(warnings[1].expires, 900)
        XCTAssertNil(warnings[4].onset)
    }

    /// A US alert's id is the same whichever other alerts the answer holds: its `uri` is the
    /// place's forecast page, which the next alert there links too.
    func testDarkSkyUSAlertKeepsItsIdAsOtherAlertsComeAndGo() throws {
        let page = "https://forecast.weather.gov/MapClick.php?lon=-74.006&lat=40.714"
        let heat: [String: Any] = ["title": "Heat Advisory", "severity": "Moderate", "time": 100, "uri": page]
        let flood: [String: Any] = ["title": "Flood Watch", "severity": "Moderate", "time": 200, "uri": page]
        XCTAssertEqual(try XCTUnwrap(try darkSky(alerts: [heat])).map(\.id), ["Heat Advisory@100"])
        XCTAssertEqual(
            try XCTUnwrap(try darkSky(alerts: [heat, flood])).map(\.id), ["Heat Advisory@100", "Flood Watch@200"])
        XCTAssertEqual(try XCTUnwrap(try darkSky(alerts: [flood])).map(\.id), ["Flood Watch@200"], "not the heat's id")
        // Two alerts of one title and hour for other zones are two (two rivers' Flood Warnings);
        // the same one twice is one.
        var zoneA = flood
        zoneA["regions"] = ["Zone A"]
        var zoneB = flood
        zoneB["regions"] = ["Zone B"]
        let both = try XCTUnwrap(try darkSky(alerts: [zoneA, zoneB, zoneA]))
        XCTAssertEqual(both.count, 2)
        XCTAssertEqual(Set(both.map(\.id)).count, 2)
        XCTAssertTrue(both.allSatisfy { $0.id.hasPrefix("Flood Watch@200#") })
    }

    func oneCall(_ name: String) throws -> WeatherSnapshot {
        try OpenWeatherMapProvider.decode(
            oneCall: try TestPaths.fixtureBytes(name), place: place, settings: ForecastSettings(days: 0, hours: 0)
        ).get()
    }

    func testOneCallAlertsOncePerAlertNotPerLanguage() throws {
        let snapshot = try oneCall("openweathermap-onecall-alerts.json")
        XCTAssertEqual(snapshot.current.temperatureCelsius, 24.52)
        let warnings = try XCTUnwrap(snapshot.warnings)
        XCTAssertEqual(warnings.count, 1, "the German copy of the English alert is the same alert")
        let gusts = try XCTUnwrap(warnings.first)
        XCTAssertEqual(gusts.id, "Deutscher Wetterdienst 1781528400-1781550000 Wind")
        XCTAssertEqual(gusts.source, "openweathermap")
        XCTAssertEqual(gusts.event, "wind gusts")
        XCTAssertEqual(gusts.headline, "wind gusts")
        XCTAssertEqual(gusts.sender, "Deutscher Wetterdienst")
        XCTAssertEqual(gusts.severity, .unknown, "One Call has no severity")
        XCTAssertEqual(gusts.onset, 1_781_528_400)
        XCTAssertEqual(gusts.expires, 1_781_550_000)
        XCTAssertTrue(gusts.description.hasPrefix("Wind gusts of around 55 km/h"))
    }

    func testOneCallWithoutAlertsHasNoneInForceAndTheFreeEndpointsCarryNone() throws {
        XCTAssertEqual(try oneCall("openweathermap-onecall.json").warnings, [], "alerts absent: none in force")
        let free = try OpenWeatherMapProvider.decode(
            current: try TestPaths.fixtureBytes("openweathermap-current.json"),
            forecast: try TestPaths.fixtureBytes("openweathermap-forecast.json"), place: place,
            settings: ForecastSettings()
        ).get()
        XCTAssertNil(free.warnings, "the 2.5 endpoints carry no alerts")
        let met = try METNorwayProvider.decode(
            try TestPaths.fixtureBytes("met-no-compact.json"), place: place, settings: ForecastSettings(),
            offset: { _ in 0 }
        ).get()
        XCTAssertNil(met.warnings)
    }
}
