import Foundation
import XCTest

@testable import Cloudy

/// A step's precipitation goes to the local days its period covers, hour by hour.
extension OtherProvidersDecodingTests {
    /// `rain.3h` is the 3 hours before its step: rain OWM reports at 00:00 fell the evening before,
    /// and a period across midnight is shared by the hour (Berlin, UTC+2: 23:00–02:00).
    func testOpenWeatherMapRainGoesToTheDaysItsThreeHoursFellOn() throws {
        func daily(timezone: Int, rainOn step: Int = 3) throws -> [DailyForecast] {
            let somewhere = Place(name: "Somewhere", latitude: 5.6, longitude: -0.19)
            // By default the step at 00:00Z on 16 June.
            return try owm(timezone: timezone, place: somewhere) { $0[step]["rain"] = ["3h": 6.0] }.daily
        }
        let utc = try daily(timezone: 0)
        XCTAssertEqual(utc.map(\.daysAhead), [0, 1])
        XCTAssertEqual(try XCTUnwrap(utc[0].precipitationSumMeters), 0.0035 + 0.006, accuracy: 1e-15)
        XCTAssertEqual(utc[1].precipitationSumMeters, 0, "tomorrow's periods are dry")
        XCTAssertEqual(utc[1].temperatureMinCelsius, 15.02, "the step's own values are at its time")
        // India (UTC+5:30): the step at 21:00Z covers 23:30–02:30, half an hour of it today.
        let india = try daily(timezone: 19_800, rainOn: 2)
        XCTAssertEqual(try XCTUnwrap(india[0].precipitationSumMeters), 0.0035 + 0.001, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(india[1].precipitationSumMeters), 0.005, accuracy: 1e-15)
        let berlin = try daily(timezone: 7200)
        XCTAssertEqual(try XCTUnwrap(berlin[0].precipitationSumMeters), 0.0035 + 0.002, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(berlin[1].precipitationSumMeters), 0.004, accuracy: 1e-15)
    }

    /// MET's `next_6_hours` looks forward from its step: at 18:00Z in Berlin (UTC+2) it is
    /// 20:00–02:00, four hours today and two tomorrow.
    func testMETNorwaySixHoursAcrossMidnightAreSharedByTheHour() throws {
        var document = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("met-no-compact.json")) as? [String: Any])
        var properties = try XCTUnwrap(document["properties"] as? [String: Any])
        var series = try XCTUnwrap(properties["timeseries"] as? [[String: Any]])
        series[4]["time"] = "2026-06-15T18:00:00Z"
        series[4]["data"] = ["next_6_hours": ["details": ["precipitation_amount": 6.0]]]
        // A dry period from 18:00Z on the 16th, so that the 16th is whole (to 22:00Z in Berlin).
        series[5]["time"] = "2026-06-16T18:00:00Z"
        series[5]["data"] = ["next_6_hours": ["details": ["precipitation_amount": 0.0]]]
        properties["timeseries"] = series
        document["properties"] = properties
        let daily = try METNorwayProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: document)), place: berlin, settings: settings,
            offset: ForecastTime.utcOffsets(zone: berlin.timezone, fixed: 7200)
        ).get().daily
        XCTAssertEqual(daily.map(\.daysAhead), [0, 1])
        // Beside the hourly 2.1 mm, the 15:00Z step's six hours have 1.4 mm more over 16–21Z, of
        // which 16–18Z (2 of the 5 hours) fall before the 18:00Z step's own period: 0.56 mm.
        XCTAssertEqual(try XCTUnwrap(daily[0].precipitationSumMeters), 0.0021 + 0.00056 + 0.004, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(daily[1].precipitationSumMeters), 0.002, accuracy: 1e-15)
    }

    /// Where the hourly part ends before the next six-hourly step, the last hourly step's six
    /// hours have more than its hour: 18:00Z says 0.5 mm in its hour and 6.0 mm to midnight,
    /// and the next step is 00:00Z. The 5.5 mm in 19–24Z count: all of them today in UTC; in
    /// Berlin (UTC+2) 3 of the 5 hours (19–22Z) today, 2 tomorrow.
    func testMETNorwaySixHoursAfterTheLastHourlyStepCount() throws {
        func step(_ time: String, one: Double?, six: Double) -> [String: Any] {
            var data: [String: Any] = [
                "instant": ["details": ["air_temperature": 20.0]],
                "next_6_hours": ["details": ["precipitation_amount": six]],
            ]
            if let one { data["next_1_hours"] = ["details": ["precipitation_amount": one]] }
            return ["time": time, "data": data]
        }
        let document: [String: Any] = [
            "properties": [
                "timeseries": [
                    step("2026-06-15T17:00:00Z", one: 0, six: 0.5),
                    step("2026-06-15T18:00:00Z", one: 0.5, six: 6.0),
                    step("2026-06-16T00:00:00Z", one: nil, six: 0),
                    step("2026-06-16T06:00:00Z", one: nil, six: 0),
                    step("2026-06-16T12:00:00Z", one: nil, six: 0),
                    step("2026-06-16T18:00:00Z", one: nil, six: 0),
                    step("2026-06-17T00:00:00Z", one: nil, six: 0),
                ]
            ]
        ]
        func daily(_ zone: String) throws -> [DailyForecast] {
            var place = berlin
            place.timezone = zone
            return try METNorwayProvider.decode(
                Array(try JSONSerialization.data(withJSONObject: document)), place: place, settings: settings,
                offset: ForecastTime.utcOffsets(zone: zone, fixed: 0)
            ).get().daily
        }
        let utc = try daily("Etc/UTC")
        XCTAssertEqual(try XCTUnwrap(utc.first?.precipitationSumMeters), 0.006, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(utc.dropFirst().first?.precipitationSumMeters), 0, accuracy: 1e-15)
        let inBerlin = try daily("Europe/Berlin")
        XCTAssertEqual(try XCTUnwrap(inBerlin.first?.precipitationSumMeters), 0.0005 + 0.0033, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(inBerlin.dropFirst().first?.precipitationSumMeters), 0.0022, accuracy: 1e-15)
        XCTAssertEqual(utc.first?.temperatureMaxCelsius, 20, "the piece adds no values")
        // The 18:00Z step twice (a repeated step counts once): its rest too.
        var repeated = document
        var series = try XCTUnwrap((document["properties"] as? [String: Any])?["timeseries"] as? [[String: Any]])
        series.insert(series[1], at: 2)
        repeated["properties"] = ["timeseries": series]
        let once = try METNorwayProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: repeated)), place: berlin, settings: settings,
            offset: ForecastTime.utcOffsets(zone: "Etc/UTC", fixed: 0)
        ).get().daily
        XCTAssertEqual(try XCTUnwrap(once.first?.precipitationSumMeters), 0.006, accuracy: 1e-15)
    }
}
