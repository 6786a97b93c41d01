import XCTest

@testable import Cloudy

/// The days the pages mark for the air-quality threshold (`alerts.air_quality`).
final class AirQualityMarksTests: XCTestCase {
    /// Milan, with an air-quality threshold of 50.
    let milan: Place = {
        var place = Place(name: "Milan", latitude: 45.46, longitude: 9.19)
        place.alerts[.airQuality] = 50
        return place
    }()

    /// A weather snapshot of `days`, each dated from the fixtures' local midnight (UTC+2).
    func snapshot(_ days: [DailyForecast]) -> WeatherSnapshot {
        WeatherSnapshot(
            current: CurrentConditions(observedAt: PlaceSnapshots.observedAt), daily: days, utcOffsetSeconds: 7200)
    }

    /// The air-quality threshold is marked on the pages as `CloudyAirQualityForecast` compares
    /// (which fires for today and tomorrow; the pages mark every day): a day whose highest
    /// European index is at or above it, read from the air-quality report's day of the same
    /// date. No report (air quality off, or its answer stale), no mark.
    func testADayWhoseAirQualityCrossesItsThresholdIsMarked() {
        var place = milan
        let midnight = PlaceSnapshots.localMidnight
        let snapshot = snapshot([
            DailyForecast(daysAhead: 0, date: midnight, temperatureMaxCelsius: 20, temperatureMinCelsius: 10),
            DailyForecast(daysAhead: 1, date: midnight + 86400, temperatureMaxCelsius: 31),
            DailyForecast(daysAhead: 2, date: midnight + 2 * 86400),
        ])
        let report = AirQualityReport(daily: [
            DailyAirQuality(daysAhead: 0, indicesMax: AirQualityIndices(european: 49.5, epa: 180)),
            DailyAirQuality(daysAhead: 1, indicesMax: AirQualityIndices(european: 64)),
            DailyAirQuality(daysAhead: 2, indicesMax: AirQualityIndices(european: 50)),
        ])
        let week = WeekViewModel(
            snapshot: snapshot, airQuality: report.daily, units: place.units, thresholds: place.alerts,
            now: PlaceSnapshots.observedAt)
        XCTAssertEqual(week.days.map(\.marks), ["", "Heat, Air pollution", "Air pollution"])
        XCTAssertEqual(
            week.days[1].crossings.last,
            ThresholdCrossing(
                alert: "air_quality", title: "Air pollution", detail: "air quality index 64 (poor), at or above 50"))

        var status = PlaceStatus(place: place, snapshot: snapshot, lastSuccess: 1, lastAttempt: 1)
        status.airQuality = AirQualityStatus(report: report, lastSuccess: 1, lastAttempt: 1)
        let card = StatusViewModel(status: status, units: place.units, now: 2, staleAfter: 1e10)
        XCTAssertEqual(card.weather?.thresholdsAhead, "Tomorrow: Heat, Air pollution · Wednesday: Air pollution")
        status.airQuality?.lastSuccess = -1e9  // older than stale_after: its values are not shown
        let staleAir = StatusViewModel(status: status, units: place.units, now: 2, staleAfter: 1e8)
        XCTAssertEqual(staleAir.weather?.thresholdsAhead, "Tomorrow: Heat")
        place.alerts[.airQuality] = nil
        XCTAssertEqual(
            WeekViewModel(
                snapshot: snapshot, airQuality: report.daily, units: place.units, thresholds: place.alerts, now: 0
            )
            .days.map(\.marks),
            ["", "Heat", ""])
    }

    /// The weather and the air quality refresh apart: across local midnight the air-quality
    /// answer counts its days from the next date. Its marks go on the weather day of their date,
    /// not of their `daysAhead`.
    func testAnAirQualityReportThatCountsFromTheNextDateIsMatchedByDate() {
        let place = milan
        let midnight = PlaceSnapshots.localMidnight
        let snapshot = snapshot((0..<3).map { DailyForecast(daysAhead: $0, date: midnight + Double($0) * 86400) })
        let today = WeekViewModel.localToday(snapshot, now: PlaceSnapshots.observedAt)
        let nextDate = [30.0, 64].enumerated().map { ahead, index in
            DailyAirQuality(
                daysAhead: ahead, localDay: today + 1 + ahead, indicesMax: AirQualityIndices(european: index))
        }
        let week = WeekViewModel(
            snapshot: snapshot, airQuality: nextDate, units: place.units, thresholds: place.alerts,
            now: PlaceSnapshots.observedAt)
        XCTAssertEqual(week.days.map(\.marks), ["", "", "Air pollution"], "64 is the day after tomorrow's")
        var status = PlaceStatus(place: place, snapshot: snapshot, lastSuccess: 1, lastAttempt: 1)
        status.airQuality = AirQualityStatus(
            report: AirQualityReport(daily: nextDate), lastSuccess: 1, lastAttempt: 1)
        let card = StatusViewModel(status: status, units: place.units, now: 2, staleAfter: 1e10)
        XCTAssertEqual(card.weather?.thresholdsAhead, "Wednesday: Air pollution")
    }
}
