import XCTest

@testable import Cloudy

/// The status page's line for a source beside the weather (`PlaceStatus.sourcesBeside`) whose
/// last ask failed: what it still shows and how old that is, or that it has nothing to show.
final class SourcesBesideTests: XCTestCase {
    let now = 1_781_526_000.0

    func card(_ airQuality: AirQualityStatus?) -> StatusViewModel {
        let place = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
        var status = PlaceStatus(place: place, lastSuccess: now - 60, lastAttempt: now - 60)
        status.airQuality = airQuality
        return StatusViewModel(status: status, units: place.units, now: now, staleAfter: 1800)
    }

    func testAFailedAskSaysHowOldTheValuesStillShownAreOrThatThereAreNone() {
        let report = AirQualityReport(observedAt: now - 720, indices: AirQualityIndices(european: 58))
        let failed = "open-meteo-air-quality: HTTP 503"
        XCTAssertEqual(
            card(AirQualityStatus(report: report, lastSuccess: now - 720, lastAttempt: now, lastError: failed))
                .problems,
            [
                "Air quality: the last refresh failed (open-meteo-air-quality: HTTP 503); the values shown are from "
                    + "its answer of \(ValueFormat.age(720)) ago"
            ])
        XCTAssertEqual(
            card(AirQualityStatus(report: report, lastSuccess: now - 3600, lastAttempt: now, lastError: failed))
                .problems,
            ["Air quality: the last refresh failed (open-meteo-air-quality: HTTP 503); no values to show"],
            "older than stale_after: nothing is shown of it")
        XCTAssertEqual(card(AirQualityStatus(report: report, lastSuccess: now, lastAttempt: now)).problems, [])
        XCTAssertEqual(card(nil).problems, [], "not asked yet")
    }
}
