import Foundation
import XCTest

@testable import Cloudy

/// Answers a weather API should never send, from a black-box review that fed the exporter
/// hostile upstreams: what of them reaches `/metrics`.
final class HostileAnswersTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)

    /// The Open-Meteo fixture with its `"timezone"` value replaced by `zone` (JSON-escaped).
    func openMeteo(zone: String) throws -> WeatherSnapshot {
        let fixture = String(decoding: try TestPaths.fixtureBytes("open-meteo-forecast.json"), as: UTF8.self)
        let quoted = String(decoding: try JSONEncoder().encode(zone), as: UTF8.self)
        let edited = fixture.replacingOccurrences(of: #""timezone":"Europe/Berlin""#, with: #""timezone":"# + quoted)
        XCTAssertNotEqual(edited, fixture)
        return try XCTUnwrap(
            OpenMeteoProvider.decode(
                Array(edited.utf8), places: [berlin], forecast: ForecastSettings(days: 7, hours: 24)
            )
            .first?.get())
    }

    /// `weather_location_info`'s `timezone` label for `snapshot` of `place`.
    func zoneLabel(_ place: Place, _ snapshot: WeatherSnapshot) -> String? {
        var page = MetricFamilies()
        let status = PlaceStatus(place: place, snapshot: snapshot, lastSuccess: 1, lastAttempt: 1)
        MetricsViewModel(status: status, units: UnitSettings(), provider: .openMeteo, now: 1, staleAfter: 10)
            .addSamples(to: &page)
        let text = String(buffer: RenderedMetrics(page: page, processMetrics: { MetricFamilies() }).prometheus)
        let line = text.split(separator: "\n").first { $0.hasPrefix("weather_location_info{") }
        return line?.split(separator: ",").first { $0.hasPrefix("timezone=") }.map(String.init)
    }

    func testAnAnswersZoneNoMachineKnowsIsNoZone() throws {
        // It became the timezone label as sent: 100 KB (over a Prometheus label_value_length_limit,
        // which drops the whole scrape), a NUL, a right-to-left override; and it decided the days.
        for zone in ["Mars/Olympus_Mons", "Europe/Berlin\u{0}\u{202E}<b>" + String(repeating: "Z", count: 100_000)] {
            let snapshot = try openMeteo(zone: zone)
            XCTAssertNil(snapshot.timezone)
            XCTAssertEqual(zoneLabel(berlin, snapshot), #"timezone="""#)
            XCTAssertEqual(snapshot.daily.map(\.daysAhead), Array(0..<7), "days by the answer's offset")
        }
        let known = try openMeteo(zone: "Europe/Berlin")
        XCTAssertEqual(known.timezone, "Europe/Berlin")
        XCTAssertEqual(zoneLabel(berlin, known), #"timezone="Europe/Berlin""#)
    }
}
