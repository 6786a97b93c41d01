import Foundation
import XCTest

@testable import Cloudy

/// The days built from steps end where the steps do: a later day they stop describing before
/// its midnight is left out, so no early-hours "high" is published as the day's.
extension OtherProvidersDecodingTests {
    /// Appends `count` copies of the forecast's last entry, each 3 hours after the one before,
    /// without its rain: steps that keep the last one's values and extend the forecast.
    static func extendForecast(_ forecast: inout [String: Any], by count: Int) throws {
        var list = try XCTUnwrap(forecast["list"] as? [[String: Any]])
        var step = try XCTUnwrap(list.last)
        step["rain"] = nil
        for _ in 0..<count {
            let time = try XCTUnwrap(step["dt"] as? Int) + 10_800
            step["dt"] = time
            step["dt_txt"] = nil
            list.append(step)
        }
        forecast["list"] = list
    }

    /// Berlin (UTC+2): the fixture's last step is 02:00 on 16 June. The 3-hourly series describes
    /// 16 June whole only when it reaches 21:00Z (23:00 local, standing for the hours to midnight).
    func testOpenWeatherMapLeavesOutALaterDayTheStepsEndBefore() throws {
        XCTAssertEqual(try owm(dryStepsAfter: 0).daily.map(\.daysAhead), [0], "02:00 alone is not a day")
        XCTAssertEqual(
            try owm(dryStepsAfter: 6).daily.map(\.daysAhead), [0], "the last step, 20:00 local, reaches 23:00")
        let whole = try owm(dryStepsAfter: 7)
        XCTAssertEqual(whole.daily.map(\.daysAhead), [0, 1])
        XCTAssertEqual(whole.daily[1].temperatureMaxCelsius, 15.02)
        // Today stays what is left of it, however little: in UTC+10 the observation is 22:18 and
        // every step is tomorrow's, which the fixture's four steps do not cover.
        let unzoned = Place(name: "Somewhere", latitude: 52.52, longitude: 13.41)
        let east = try owm(timezone: 36000, place: unzoned, dryStepsAfter: 0)
        XCTAssertEqual(east.daily.map(\.daysAhead), [0])
        XCTAssertEqual(east.daily[0].precipitationSumMeters, 0)
    }

    /// MET Norway's series turns 6-hourly and ends with a lone step that has no period. Oslo in
    /// winter (UTC+1): hourly steps on 1 and 2 December, 6-hourly from 00:00Z on the 3rd to 18:00Z
    /// on the 4th, then 00:00Z on the 5th, which is 01:00 there.
    func testMETNorwayLeavesOutTheLastDayOfItsSeries() throws {
        let oslo = Place(name: "Oslo", latitude: 59.91, longitude: 10.75, timezone: "Europe/Oslo")
        let start = 1_796_083_200.0  // 2026-12-01T00:00Z
        var series: [[String: Any]] = []
        func step(_ time: Double, temperature: Double, period: String?) {
            var data: [String: Any] = ["instant": ["details": ["air_temperature": temperature]]]
            if let period { data[period] = ["details": ["precipitation_amount": 1.0]] }
            let stamp = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: time))
            series.append(["time": stamp, "data": data])
        }
        for hour in 0..<48 { step(start + Double(hour) * 3600, temperature: 2, period: "next_1_hours") }
        for six in 0..<8 { step(start + 172_800 + Double(six) * 21_600, temperature: -5, period: "next_6_hours") }
        step(start + 345_600, temperature: -9, period: nil)
        let document: [String: Any] = ["properties": ["timeseries": series]]
        let daily = try METNorwayProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: document)), place: oslo,
            settings: ForecastSettings(days: 7, hours: 24),
            offset: ForecastTime.utcOffsets(zone: oslo.timezone, fixed: 3600)
        ).get().daily
        // The 4th's last step, 19:00 local, stands for the six hours to 01:00: a whole day. The
        // 5th has 01:00 alone, and its -9 °C is no low of the day.
        XCTAssertEqual(daily.map(\.daysAhead), [0, 1, 2, 3])
        XCTAssertEqual(daily[3].temperatureMinCelsius, -5)
        // Its rain: an hour of the 3rd's evening period, three periods, five hours of its own
        // evening's (the sixth is the 5th's).
        XCTAssertEqual(try XCTUnwrap(daily[3].precipitationSumMeters), 0.004, accuracy: 1e-15)
    }
}
