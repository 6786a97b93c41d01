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
    /// 16 June whole only when it reaches 00:00Z on the 17th: its temperatures from the step at
    /// 21:00Z (23:00 local, standing for the hours to midnight), and its rain from the next step,
    /// whose `rain.3h` is the three hours before it.
    func testOpenWeatherMapLeavesOutALaterDayTheStepsEndBefore() throws {
        XCTAssertEqual(try owm(dryStepsAfter: 0).daily.map(\.daysAhead), [0], "02:00 alone is not a day")
        XCTAssertEqual(
            try owm(dryStepsAfter: 7).daily.map(\.daysAhead), [0], "no step has the rain of 23:00–24:00 local")
        let whole = try owm(dryStepsAfter: 8)
        XCTAssertEqual(whole.daily.map(\.daysAhead), [0, 1])
        XCTAssertEqual(whole.daily[1].temperatureMaxCelsius, 15.02)
        // Today stays what is left of it, however little: in UTC+10 the observation is 22:18 and
        // every step is tomorrow's, which the fixture's four steps do not cover.
        let unzoned = Place(name: "Somewhere", latitude: 52.52, longitude: 13.41)
        let east = try owm(timezone: 36000, place: unzoned, dryStepsAfter: 0)
        XCTAssertEqual(east.daily.map(\.daysAhead), [0])
        XCTAssertEqual(east.daily[0].precipitationSumMeters, 0)
    }

    /// A step the answer repeats (same `dt`) counts once: its rain is not summed twice.
    func testARepeatedStepCountsOnce() throws {
        let daily = try owm { $0.insert($0[1], at: 2) }.daily  // the 18:00Z step, 3.5 mm, twice
        XCTAssertEqual(try XCTUnwrap(daily.first?.precipitationSumMeters), 0.0035, accuracy: 1e-15)
    }

    /// A MET compact series of `steps` (time, temperature, the period of its 1 mm, if any) decoded
    /// for `place`: its days.
    func metDays(_ place: Place, _ steps: [(time: Double, temperature: Double, period: String?)]) throws
        -> [DailyForecast]
    {
        let series = steps.map { step -> [String: Any] in
            var data: [String: Any] = ["instant": ["details": ["air_temperature": step.temperature]]]
            if let period = step.period { data[period] = ["details": ["precipitation_amount": 1.0]] }
            return ["time": ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: step.time)), "data": data]
        }
        let document: [String: Any] = ["properties": ["timeseries": series]]
        return try METNorwayProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: document)), place: place,
            settings: ForecastSettings(days: 7, hours: 24),
            offset: ForecastTime.utcOffsets(zone: place.timezone, fixed: 0)
        ).get().daily
    }

    /// MET Norway's series turns 6-hourly and ends with a lone step that has no period. Oslo in
    /// winter (UTC+1): hourly steps on 1 and 2 December, 6-hourly from 00:00Z on the 3rd to 18:00Z
    /// on the 4th, then 00:00Z on the 5th, which is 01:00 there.
    func testMETNorwayLeavesOutTheLastDayOfItsSeries() throws {
        let oslo = Place(name: "Oslo", latitude: 59.91, longitude: 10.75, timezone: "Europe/Oslo")
        let start = 1_796_083_200.0  // 2026-12-01T00:00Z
        let hourly = (0..<48).map { (start + Double($0) * 3600, 2.0, Optional("next_1_hours")) }
        let sixHourly = (0..<8).map { (start + 172_800 + Double($0) * 21_600, -5.0, Optional("next_6_hours")) }
        let daily = try metDays(oslo, hourly + sixHourly + [(start + 345_600, -9, nil)])
        // The 4th's last step, 19:00 local, has its six hours to 01:00: a whole day. The 5th has
        // 01:00 alone, and its -9 °C is no low of the day.
        XCTAssertEqual(daily.map(\.daysAhead), [0, 1, 2, 3])
        XCTAssertEqual(daily[3].temperatureMinCelsius, -5)
        // Its rain: an hour of the 3rd's evening period, three periods, five hours of its own
        // evening's (the sixth is the 5th's).
        XCTAssertEqual(try XCTUnwrap(daily[3].precipitationSumMeters), 0.004, accuracy: 1e-15)

        // London (UTC+0): the last step, 18:00Z, without a period of its own. Its temperature
        // stands for the evening, but no amount does: the 4th is not whole.
        let london = Place(name: "London", latitude: 51.51, longitude: -0.13, timezone: "Europe/London")
        let evening = start + 172_800 + 7 * 21_600
        let withoutRain = try metDays(london, hourly + sixHourly.dropLast() + [(evening, -5, nil)])
        XCTAssertEqual(withoutRain.map(\.daysAhead), [0, 1, 2])
        XCTAssertEqual(try metDays(london, hourly + sixHourly).map(\.daysAhead), [0, 1, 2, 3])
    }

    /// Beirut moves its clocks from 00:00 to 01:00 on 29 March 2026 (22:00Z): Saturday the 28th
    /// ends at 22:00Z, and a series that stops an hour short of it leaves the day out.
    func testADayThatEndsAtAChangeOfOffsetEndsWhereTheZoneSays() throws {
        let beirut = Place(name: "Beirut", latitude: 33.89, longitude: 35.5, timezone: "Asia/Beirut")
        let start = 1_774_569_600.0  // 2026-03-27T00:00Z, 02:00 on Friday there
        func hours(through last: Int) -> [(time: Double, temperature: Double, period: String?)] {
            (0...last).map { (start + Double($0) * 3600, 15, "next_1_hours") }
        }
        XCTAssertEqual(try metDays(beirut, hours(through: 44)).map(\.daysAhead), [0], "to 21:00Z, 23:00 local")
        XCTAssertEqual(try metDays(beirut, hours(through: 45)).map(\.daysAhead), [0, 1], "to 22:00Z, midnight")
    }
}
