import Foundation
import XCTest

@testable import Cloudy

/// Dark Sky (Pirate Weather) decodes into the same model as the other providers: base units
/// converted exactly, -999 as no value, `hour="1"` the next whole hour, `day="0"` today in the
/// place's `timezone:` or else the answer's zone, the condition from `icon` and `summary`.
final class DarkSkyDecodingTests: XCTestCase {
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006)
    let settings = ForecastSettings(days: 7, hours: 24)

    /// The fixture as JSON, for tests that change it.
    func fixture() throws -> [String: Any] {
        try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("pirateweather-forecast.json")) as? [String: Any])
    }

    func decode(_ json: [String: Any], settings: ForecastSettings? = nil) throws -> WeatherSnapshot {
        try DarkSkyProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: json)), place: newYork, settings: settings ?? self.settings
        ).get()
    }

    func testCurrentConditionsInBaseUnits() throws {
        let snapshot = try decode(try fixture())
        let now = snapshot.current
        XCTAssertEqual(now.observedAt, 1_781_526_000)
        XCTAssertEqual(now.temperatureCelsius, 23.4)
        XCTAssertEqual(now.apparentTemperatureCelsius, 25.9)
        XCTAssertEqual(now.dewPointCelsius, 19.55)
        XCTAssertEqual(now.relativeHumidityRatio, 0.79, "already 0–1")
        XCTAssertEqual(now.windSpeedMetersPerSecond, 3.36, "units=si: m/s")
        XCTAssertEqual(now.windGustMetersPerSecond, 5.94)
        XCTAssertEqual(now.windDirectionDegrees, 218)
        XCTAssertEqual(try XCTUnwrap(now.pressureMslPascals), 101_370, accuracy: 1e-9, "hPa → Pa")
        XCTAssertEqual(now.cloudCoverRatio, 0.38)
        XCTAssertEqual(now.uvIndex, 3)
        XCTAssertEqual(try XCTUnwrap(now.visibilityMeters), 16_090, accuracy: 1e-9, "km → m")
        XCTAssertEqual(now.precipitationMeters, 0)
        XCTAssertEqual(now.conditionCode, 2, "partly-cloudy-day")
        XCTAssertEqual(now.isDay, true)
        XCTAssertEqual(snapshot.timezone, "America/New_York")
        XCTAssertEqual(snapshot.utcOffsetSeconds, -4 * 3600, "offset is in hours")
        XCTAssertEqual(snapshot.latitude, 40.7143)
        XCTAssertEqual(snapshot.longitude, -74.006)
    }

    func testMissingValuesAreAbsentAndIntensityIsAnHoursAmount() throws {
        var json = try fixture()
        var current = try XCTUnwrap(json["currently"] as? [String: Any])
        current["visibility"] = -999
        current["humidity"] = NSNull()
        current["windGust"] = "gusty"
        current["precipIntensity"] = 2.5
        current["icon"] = "rain"
        json["currently"] = current
        var daily = try XCTUnwrap(json["daily"] as? [String: Any])
        var days = try XCTUnwrap(daily["data"] as? [[String: Any]])
        days[0]["sunriseTime"] = 1_781_530_000  // 13:26Z
        daily["data"] = days
        json["daily"] = daily
        let now = try decode(json).current
        XCTAssertNil(now.visibilityMeters, "-999 is Dark Sky's no value")
        XCTAssertNil(now.relativeHumidityRatio)
        XCTAssertNil(now.windGustMetersPerSecond, "a value that is not a number is no value")
        XCTAssertEqual(try XCTUnwrap(now.precipitationMeters), 0.0025, accuracy: 1e-12, "2.5 mm/h over the hour")
        XCTAssertEqual(now.temperatureCelsius, 23.4, "the rest of the point stays")
        // No day/night icon: today's sunrise (13:26Z here) says 12:20Z is still night.
        XCTAssertEqual(now.isDay, false)
    }

    func testHourlyStepsStartAtTheNextWholeHourAndLookBackForPrecipitation() throws {
        var json = try fixture()
        var hourly = try XCTUnwrap(json["hourly"] as? [String: Any])
        var data = try XCTUnwrap(hourly["data"] as? [[String: Any]])
        data[1]["precipIntensity"] = 1.2
        hourly["data"] = data
        json["hourly"] = hourly
        let steps = try decode(json).hourly
        XCTAssertEqual(steps.map(\.hoursAhead), [1, 2], "12:00Z is the current hour (12:20Z)")
        XCTAssertEqual(steps[0].time, 1_781_528_400)
        XCTAssertEqual(steps[0].temperatureCelsius, 24.1)
        XCTAssertEqual(steps[0].precipitationProbabilityRatio, 0.03)
        XCTAssertEqual(steps[0].precipitationMeters, 0, "12:00's intensity, 0 mm/h")
        XCTAssertEqual(steps[0].windSpeedMetersPerSecond, 3.47)
        XCTAssertEqual(steps[0].conditionCode, 1, "clear-day, \"Mostly Clear\"")
        XCTAssertEqual(
            try XCTUnwrap(steps[1].precipitationMeters), 0.0012, accuracy: 1e-12, "14:00 takes 13:00's 1.2 mm/h")
        XCTAssertEqual(steps[1].temperatureCelsius, 25.5)
        XCTAssertEqual(try decode(try fixture(), settings: ForecastSettings(days: 7, hours: 1)).hourly.count, 1)
    }

    func testDaysCountFromTodayInTheAnswersZone() throws {
        let days = try decode(try fixture()).daily
        XCTAssertEqual(days.map(\.daysAhead), [0, 1, 2], "08:20 in New York: the first day is today")
        let today = days[0]
        XCTAssertEqual(today.date, 1_781_496_000, "local midnight")
        XCTAssertEqual(today.temperatureMaxCelsius, 29.5)
        XCTAssertEqual(today.temperatureMinCelsius, 21.1)
        XCTAssertEqual(today.precipitationSumMeters, 0.00912, "0.38 mm/h for 24 h, with no binary noise")
        XCTAssertEqual(today.precipitationProbabilityRatio, 0.86)
        XCTAssertEqual(today.uvIndexMax, 7.15)
        XCTAssertEqual(today.conditionCode, 95, "thunderstorm")
        XCTAssertEqual(today.sunrise, 1_781_515_450)
        XCTAssertEqual(today.sunset, 1_781_569_729)
        XCTAssertNil(today.windSpeedMaxMetersPerSecond, "Dark Sky's daily wind is a mean, not a maximum")
        XCTAssertNil(today.windGustMaxMetersPerSecond)
        XCTAssertEqual(days[1].conditionCode, 0)
        XCTAssertEqual(days[1].precipitationSumMeters, 0)
        XCTAssertEqual(days[2].precipitationSumMeters, 0.01368)
        XCTAssertEqual(days[2].temperatureMaxCelsius, 32.3)
        XCTAssertEqual(try decode(try fixture(), settings: ForecastSettings(days: 2, hours: 24)).daily.count, 2)
    }

    /// The day's sum is its mean intensity over its hours: 25 on the day New York's clocks go
    /// back (1 November 2026), 24 the day after.
    func testADayTheClocksChangeSumsItsOwnHours() throws {
        var json = try fixture()
        var zoned = newYork
        zoned.timezone = "America/New_York"
        var currently = try XCTUnwrap(json["currently"] as? [String: Any])
        currently["time"] = 1_793_520_000  // 03:00 EST, 1 November
        json["currently"] = currently
        let days = [1_793_505_600, 1_793_595_600].map { ["time": $0, "precipIntensity": 1.0] }
        json["daily"] = ["data": days]
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        let daily = try DarkSkyProvider.decode(body, place: zoned, settings: settings).get().daily
        XCTAssertEqual(daily.map(\.precipitationSumMeters), [0.025, 0.024])
    }

    /// A place's `timezone:` decides which day is today, whatever offset the answer has.
    func testAConfiguredZoneCountsTheDays() throws {
        var tokyo = newYork
        tokyo.timezone = "Asia/Tokyo"
        let body = Array(try JSONSerialization.data(withJSONObject: try fixture()))
        let snapshot = try DarkSkyProvider.decode(body, place: tokyo, settings: settings).get()
        // 21:20 in Tokyo; each New York day's noon is past midnight there: the first is tomorrow.
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), [1, 2, 3])
    }

    func testDaysAcrossMidnightAndADaylightSavingChange() throws {
        var json = try fixture()
        json["offset"] = 10.0  // 22:20 local: the answer's first day started a day earlier there
        XCTAssertEqual(try decode(json).daily.map(\.daysAhead), [1, 2, 3])
        XCTAssertEqual(try decode(json).utcOffsetSeconds, 36_000)
        json = try fixture()
        var daily = try XCTUnwrap(json["daily"] as? [String: Any])
        var data = try XCTUnwrap(daily["data"] as? [[String: Any]])
        data[2]["time"] = 1_781_668_800 + 3600  // that midnight in standard time, an hour later
        daily["data"] = data
        json["daily"] = daily
        XCTAssertEqual(try decode(json).daily.map(\.daysAhead), [0, 1, 2], "still its own day")
        json["offset"] = 1e300
        XCTAssertEqual(try decode(json).utcOffsetSeconds, 0, "no place is that far from UTC")
    }

    func testMissingSectionsAndErrorsAnsweredWithA200() throws {
        var json = try fixture()
        json.removeValue(forKey: "hourly")
        XCTAssertThrowsError(try decode(json)) { error in
            XCTAssertEqual("\(error)", "dark-sky: answer lacks the hourly section")
        }
        XCTAssertNoThrow(try decode(json, settings: ForecastSettings(days: 7, hours: 0)))
        json.removeValue(forKey: "currently")
        XCTAssertThrowsError(try decode(json)) { error in
            XCTAssertEqual("\(error)", "dark-sky: answer lacks the current section")
        }
        let body = Array(try TestPaths.fixtureBytes("pirateweather-error-401.json"))
        XCTAssertThrowsError(try DarkSkyProvider.decode(body, place: newYork, settings: settings).get()) { error in
            XCTAssertEqual("\(error)", "dark-sky: the answer is an error: Invalid authentication credentials")
        }
        XCTAssertThrowsError(try DarkSkyProvider.decode(Array("[1]".utf8), place: newYork, settings: settings).get())
    }

    /// An answer in other units than the `si` asked for (the API's default `us`, from a proxy that
    /// dropped the query) is refused, not read as SI; one that does not say is read as asked.
    func testAnAnswerInOtherUnitsIsRefused() throws {
        var json = try fixture()
        var flags = try XCTUnwrap(json["flags"] as? [String: Any])
        XCTAssertEqual(flags["units"] as? String, "si")
        flags["units"] = "us"
        json["flags"] = flags
        XCTAssertThrowsError(try decode(json)) { error in
            XCTAssertEqual(
                "\(error)",
                "dark-sky: the answer is in units=us, not the si asked for (does a proxy or mirror drop the query?)")
        }
        json.removeValue(forKey: "flags")
        XCTAssertEqual(try decode(json).current.temperatureCelsius, 23.4)
    }

    func testIconsAndSummariesMapToWMO() {
        let cases: [(String, String?, Int?)] = [
            ("clear-day", "Clear", 0), ("clear-night", "Mostly Clear", 1), ("partly-cloudy-night", nil, 2),
            ("partly-cloudy-day", "Mostly Cloudy", 3), ("cloudy", "Overcast", 3), ("fog", nil, 45),
            ("rain", "Light Rain", 61), ("rain", "Rain", 63), ("rain", "Heavy Rain", 65), ("rain", "Drizzle", 53),
            ("rain", "Light Drizzle", 51), ("possible-rain-day", "Possible Rain", 61),
            ("snow", "Flurries", 71), ("snow", "Snow", 73), ("snow", "Heavy Snow", 75),
            ("sleet", "Light Sleet", 66), ("sleet", "Sleet", 67), ("thunderstorm", "Thunderstorms", 95),
            ("hail", nil, 96), ("wind", "Windy and Partly Cloudy", 2), ("wind", "Breezy", nil),
            ("none", nil, nil), ("something-new", "Overcast", 3), ("heavy-rain", nil, 65), ("mist", nil, 45),
        ]
        for (icon, summary, code) in cases {
            XCTAssertEqual(
                ConditionMapping.wmo(darkSkyIcon: icon, summary: summary), code, "\(icon) \(summary ?? "-")")
        }
        XCTAssertEqual(ConditionMapping.isDay(darkSkyIcon: "partly-cloudy-night"), false)
        XCTAssertEqual(ConditionMapping.isDay(darkSkyIcon: "clear-day"), true)
        XCTAssertNil(ConditionMapping.isDay(darkSkyIcon: "rain"))
    }

    func testRequestPathCarriesTheKeyAndTheQuery() {
        XCTAssertEqual(
            DarkSkyProvider.path(for: newYork, key: "k") + DarkSkyProvider.query,
            "/forecast/k/40.7143,-74.006?units=si&exclude=minutely&version=2")
        XCTAssertEqual(DarkSkyProvider.pathSegment("a/b?c#d%e"), "a%2Fb%3Fc%23d%25e")
        // Hour 48 and beyond are past the answer's 48 hourly steps from the current hour.
        XCTAssertEqual(DarkSkyProvider.query(for: ForecastSettings(days: 7, hours: 47)), DarkSkyProvider.query)
        XCTAssertEqual(
            DarkSkyProvider.query(for: ForecastSettings(days: 7, hours: 48)), DarkSkyProvider.query + "&extend=hourly")
    }
}
