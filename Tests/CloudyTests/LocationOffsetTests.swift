import XCTest

@testable import Cloudy

/// `weather_location_utc_offset_seconds`: the place's offset from UTC now, in its configured zone
/// when it has one, else the provider's, so that Grafana can name a day's weekday as the place's
/// pages do (UTC's weekday is a day early at UTC+13).
final class LocationOffsetTests: XCTestCase {
    let june = 1_781_524_800.0  // 2026-06-15 12:00 UTC

    /// The place's offset on the page at `now`, its snapshot fetched a minute before (or a day,
    /// when not `fresh`: stale).
    func offset(_ place: Place, _ snapshot: WeatherSnapshot?, now: Double? = nil, fresh: Bool = true) -> [Double] {
        let now = now ?? june
        let fetched = now - (fresh ? 60 : 86_400)
        var page = MetricFamilies()
        MetricsViewModel(
            status: PlaceStatus(place: place, snapshot: snapshot, lastSuccess: fetched, lastAttempt: fetched),
            units: UnitSettings(), provider: .openMeteo, now: now, staleAfter: 1800
        ).addSamples(to: &page)
        return page.families.first { $0.descriptor.name == "weather_location_utc_offset_seconds" }?.samples.map(\.value)
            ?? []
    }

    /// Providers put the place's `timezone:` in the snapshot (Open-Meteo is asked in it); a zone
    /// wins over the one offset an answer reports, as on the pages.
    func testTheOffsetIsTheZonesElseTheAnswers() {
        let apia = Place(name: "Apia", latitude: -13.83, longitude: -171.76)
        XCTAssertEqual(offset(apia, WeatherSnapshot(current: CurrentConditions(), utcOffsetSeconds: 46_800)), [46_800])
        // Quito in its own zone, whatever offset the provider reported (OpenWeatherMap's city's).
        let quito = Place(name: "Quito", latitude: -0.18, longitude: -78.47, timezone: "America/Guayaquil")
        let reported = WeatherSnapshot(current: CurrentConditions(), timezone: quito.timezone, utcOffsetSeconds: 7200)
        XCTAssertEqual(offset(quito, reported), [-18_000])
        // Berlin's zone follows daylight saving at the time of the page: +1 h in January.
        let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41, timezone: "Europe/Berlin")
        let answer = WeatherSnapshot(current: CurrentConditions(), timezone: "Europe/Berlin", utcOffsetSeconds: 7200)
        XCTAssertEqual(offset(berlin, answer), [7200])
        XCTAssertEqual(offset(berlin, answer, now: 1_768_478_400), [3600], "2026-01-15")
        XCTAssertEqual(offset(apia, nil), [], "no answer yet: no offset known")
        XCTAssertEqual(offset(apia, answer, fresh: false), [7200], "kept while the place is stale, as its info")
    }
}
