import Foundation
import XCTest

@testable import Cloudy

/// OpenWeatherMap and MET Norway decode into the same model as Open-Meteo: same base units,
/// absent (never 0) where the provider has no such variable, days in the place's own zone.
final class OtherProvidersDecodingTests: XCTestCase {
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41, timezone: "Europe/Berlin")
    let settings = ForecastSettings(days: 7, hours: 24)

    /// The fixture's answers, its forecast's list changed by `editing`, then followed by
    /// `dryStepsAfter` copies of its last step (00:00Z on 16 June) without rain, every 3 hours: by
    /// default through 00:00Z on the 17th, so that 16 June is a whole day, its rain too
    /// (`extendForecast`).
    func owm(
        timezone: Int? = nil, place: Place? = nil, dryStepsAfter: Int = 8,
        editing: (inout [[String: Any]]) -> Void = { _ in }
    ) throws -> WeatherSnapshot {
        var current = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("openweathermap-current.json")) as? [String: Any])
        var forecast = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("openweathermap-forecast.json")) as? [String: Any])
        var list = try XCTUnwrap(forecast["list"] as? [[String: Any]])
        editing(&list)
        forecast["list"] = list
        try Self.extendForecast(&forecast, by: dryStepsAfter)
        if let timezone {
            current["timezone"] = timezone
            var city = try XCTUnwrap(forecast["city"] as? [String: Any])
            city["timezone"] = timezone
            forecast["city"] = city
        }
        return try OpenWeatherMapProvider.decode(
            current: Array(try JSONSerialization.data(withJSONObject: current)),
            forecast: Array(try JSONSerialization.data(withJSONObject: forecast)),
            place: place ?? berlin, settings: settings
        ).get()
    }

    func testOpenWeatherMapCurrentConditions() throws {
        let now = try owm().current
        XCTAssertEqual(now.observedAt, 1_781_525_923)
        XCTAssertEqual(now.temperatureCelsius, 24.52)
        XCTAssertEqual(now.apparentTemperatureCelsius, 24.17)
        XCTAssertEqual(now.relativeHumidityRatio, 0.41)
        XCTAssertEqual(now.windSpeedMetersPerSecond, 3.6, "metric units: wind already in m/s")
        XCTAssertEqual(now.windGustMetersPerSecond, 7.2)
        XCTAssertEqual(now.windDirectionDegrees, 260)
        XCTAssertEqual(now.pressureMslPascals, 101500)
        XCTAssertEqual(now.cloudCoverRatio, 0.52)
        XCTAssertEqual(now.visibilityMeters, 10000)
        XCTAssertEqual(now.precipitationMeters, 0, "no rain block: nothing fell")
        XCTAssertEqual(now.conditionCode, 2, "OWM 803 broken clouds (52 %) is partly cloudy, as Open-Meteo names it")
        XCTAssertEqual(now.isDay, true)
        XCTAssertNil(now.dewPointCelsius, "OWM 2.5 has no dew point: absent, never 0")
        XCTAssertNil(now.uvIndex)
    }

    func testOpenWeatherMapThreeHourStepsAndDailyAggregates() throws {
        let snapshot = try owm()
        XCTAssertEqual(
            snapshot.hourly.map(\.hoursAhead), [3, 6, 9, 12, 15, 18, 21, 24], "3-hour steps, hours ahead of 12:00Z")
        let six = snapshot.hourly[1]
        XCTAssertEqual(six.temperatureCelsius, 21.38)
        XCTAssertEqual(six.precipitationProbabilityRatio, 0.87)
        XCTAssertEqual(try XCTUnwrap(six.precipitationMeters), 3.5 / 3 / 1000, accuracy: 1e-15)
        XCTAssertEqual(six.conditionCode, 63)
        // Berlin (UTC+2): 17:00, 20:00 and 23:00 local are today, 02:00 (and the dry steps to
        // 23:00) tomorrow.
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), [0, 1])
        let today = snapshot.daily[0]
        XCTAssertEqual(today.temperatureMaxCelsius, 24.72)
        XCTAssertEqual(today.temperatureMinCelsius, 18.21)
        XCTAssertEqual(try XCTUnwrap(today.precipitationSumMeters), 0.0035, accuracy: 1e-15)
        XCTAssertEqual(today.precipitationProbabilityRatio, 0.87)
        XCTAssertEqual(today.windSpeedMaxMetersPerSecond, 2.94)
        XCTAssertEqual(today.windGustMaxMetersPerSecond, 6.1)
        XCTAssertEqual(today.conditionCode, 63, "the most severe condition of the day")
        XCTAssertEqual(today.sunrise, 1_781_491_369)
        XCTAssertEqual(snapshot.daily[1].temperatureMinCelsius, 15.02)
        XCTAssertEqual(snapshot.daily[1].precipitationSumMeters, 0)
        XCTAssertNil(snapshot.daily[1].sunrise)
        XCTAssertNil(today.uvIndexMax)
    }

    func testOpenWeatherMapDaysFollowThePlacesZoneAcrossMidnight() throws {
        // A place without `timezone:` has its days in the offset OWM reports.
        let unzoned = Place(name: "Somewhere", latitude: 52.52, longitude: 13.41)
        // UTC−5: the observation is 07:18 local and every step of the fixture (10:00 … 19:00) is
        // still today; the dry steps stop at 16:00 tomorrow, which is left out.
        XCTAssertEqual(try owm(timezone: -18000, place: unzoned).daily.map(\.daysAhead), [0])
        // UTC+10: the observation is 22:18 local; every step falls on tomorrow (the dry ones
        // from 13:00 on the day after, left out). Today has the hours of the first step's
        // period before midnight (22:00–24:00), a precipitation sum alone.
        let east = try owm(timezone: 36000, place: unzoned)
        XCTAssertEqual(east.daily.map(\.daysAhead), [0, 1])
        XCTAssertEqual(east.daily[0].precipitationSumMeters, 0)
        XCTAssertNil(east.daily[0].temperatureMinCelsius)
        XCTAssertEqual(east.daily[1].temperatureMinCelsius, 15.02)
        XCTAssertEqual(east.utcOffsetSeconds, 36000)
    }

    /// A place's `timezone:` decides its days, whatever offset OWM reports (CONTRACT: the zone
    /// is the configured one when given).
    func testOpenWeatherMapDaysFollowAConfiguredZoneOverTheReportedOffset() throws {
        let quito = Place(name: "Quito", latitude: -0.18, longitude: -78.47, timezone: "America/Guayaquil")
        // OWM reports Berlin's UTC+2, which would put 02:00 tomorrow; in Quito (UTC−5) every step
        // of the fixture is today, and tomorrow's dry steps end at 16:00.
        let snapshot = try owm(timezone: 7200, place: quito)
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), [0])
        XCTAssertEqual(snapshot.daily[0].temperatureMinCelsius, 15.02, "the night's low is today's there")
        XCTAssertEqual(snapshot.daily[0].date, 1_781_499_600, "local midnight in Quito: 05:00 UTC")
    }

    func testOpenWeatherMapErrorsNameTheProblemNotTheKey() throws {
        let provider = OpenWeatherMapProvider(
            Upstream(
                baseURL: "http://127.0.0.1:1", timeout: 1, client: CurlHTTPClient(userAgent: "test"),
                recorder: ExporterTelemetry(startedAt: 0), clock: ManualClock()),
            apiKey: Secret("k-123456"), forecast: settings)
        let unauthorized = HTTPResponse(status: 401, body: try TestPaths.fixtureBytes("openweathermap-error-401.json"))
        XCTAssertEqual(provider.httpError(unauthorized).message, "openweathermap: invalid API key (HTTP 401)")
        let limited = HTTPResponse(
            status: 429, headers: ["retry-after": "60"],
            body: Array("{\"cod\":429,\"message\":\"blocked k-123456\"}".utf8))
        let error = provider.httpError(limited)
        XCTAssertEqual(error.message, "openweathermap: HTTP 429: blocked <redacted>")
        XCTAssertTrue(error.isRateLimit)
        XCTAssertEqual(error.retryAfter, 60)
        let stringCode = HTTPResponse(status: 404, body: Array("{\"cod\":\"404\",\"message\":\"city not found\"}".utf8))
        XCTAssertEqual(provider.httpError(stringCode).message, "openweathermap: HTTP 404: city not found")
        XCTAssertFalse(provider.httpError(stringCode).isRateLimit)
    }

    func met(_ place: Place) throws -> WeatherSnapshot {
        let provider = METNorwayProvider(
            Upstream(
                baseURL: "http://127.0.0.1:1", timeout: 1, client: CurlHTTPClient(userAgent: "test"),
                recorder: ExporterTelemetry(startedAt: 0)),
            forecast: settings, logger: .init(label: "test"))
        return try METNorwayProvider.decode(
            try TestPaths.fixtureBytes("met-no-compact.json"), place: place, settings: settings,
            offset: provider.utcOffset(for: place)
        ).get()
    }

    func testMETNorwayCurrentAndHourly() throws {
        let snapshot = try met(berlin)
        let now = snapshot.current
        XCTAssertEqual(now.observedAt, 1_781_524_800, "the first step, 12:00Z")
        XCTAssertEqual(now.temperatureCelsius, 24.8)
        XCTAssertEqual(now.pressureMslPascals, 101460)
        XCTAssertEqual(now.relativeHumidityRatio, 42.7 / 100)
        XCTAssertEqual(now.windSpeedMetersPerSecond, 3.4)
        XCTAssertEqual(now.windDirectionDegrees, 257.4)
        XCTAssertEqual(now.cloudCoverRatio, 0.498)
        XCTAssertEqual(now.conditionCode, 2, "partlycloudy_day")
        XCTAssertEqual(now.isDay, true)
        XCTAssertNil(now.windGustMetersPerSecond, "compact has no gusts")
        XCTAssertNil(now.apparentTemperatureCelsius)
        XCTAssertNil(now.dewPointCelsius)
        XCTAssertEqual(snapshot.utcOffsetSeconds, 7200, "Europe/Berlin in June")

        XCTAssertEqual(snapshot.hourly.map(\.hoursAhead), [1, 2, 3])
        XCTAssertEqual(snapshot.hourly[2].temperatureCelsius, 24.4)
        XCTAssertEqual(snapshot.hourly[2].precipitationMeters, 0, "15:00 looks back over 14–15h: 0 mm")
        XCTAssertEqual(snapshot.hourly[2].conditionCode, 2)
    }

    func testMETNorwayDailyAggregatesInThePlacesZone() throws {
        let snapshot = try met(berlin)
        // The 18 June step's period (06:00–12:00Z) is the last amount: that day is not whole,
        // and the 25 June step is beyond seven days.
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), [0])
        let today = snapshot.daily[0]
        XCTAssertEqual(today.temperatureMaxCelsius, 24.9)
        XCTAssertEqual(today.temperatureMinCelsius, 24.4)
        // The hourly amounts (2.1 mm at 15:00Z), and the rest of the 15:00Z step's six hours (3.5 mm
        // to 21:00Z), which no step after it covers until the 18th: 1.4 mm in 16:00–21:00Z.
        XCTAssertEqual(
            try XCTUnwrap(today.precipitationSumMeters), 0.0035, accuracy: 1e-15, "the 15:00Z step's six hours, once")
        XCTAssertEqual(today.conditionCode, 81, "rain showers are the day's worst")
        XCTAssertNil(today.uvIndexMax)
        XCTAssertNil(today.precipitationProbabilityRatio)
    }

    func testMETNorwayWithoutZoneUsesTheSolarOffset() throws {
        var solar = berlin
        solar.timezone = nil
        XCTAssertEqual(try met(solar).utcOffsetSeconds, 3600, "13.41° E is UTC+1 by the sun")
        var west = solar
        west.longitude = -74
        XCTAssertEqual(try met(west).utcOffsetSeconds, -5 * 3600)
    }

    func testConditionVocabulariesMapToWMO() {
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 800), 0)
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 211), 95)
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 601), 73)
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 741), 45)
        XCTAssertNil(ConditionMapping.wmo(openWeatherMapID: 999))
        // No hail in OWM's thunderstorms, however heavy: never 96 or 99 ("with hail").
        for id in [200, 202, 212, 221, 232] { XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: id), 95, "\(id)") }
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 615), 66, "light rain and snow is light")
        XCTAssertEqual(ConditionMapping.wmo(openWeatherMapID: 616), 67)
        XCTAssertNil(ConditionMapping.wmo(openWeatherMapID: 781), "a tornado is not fog")
        XCTAssertNil(ConditionMapping.wmo(openWeatherMapID: 771))
        XCTAssertEqual(ConditionMapping.wmo(metSymbol: "heavyrainandthunder"), 95)
        XCTAssertEqual(ConditionMapping.wmo(metSymbol: "clearsky_night"), 0)
        XCTAssertEqual(ConditionMapping.wmo(metSymbol: "heavysnow"), 75)
        XCTAssertEqual(ConditionMapping.wmo(metSymbol: "rainshowersandthunder_day"), 95)
        XCTAssertEqual(ConditionMapping.isDay(metSymbol: "fair_night"), false)
        XCTAssertNil(ConditionMapping.isDay(metSymbol: "cloudy"))
        XCTAssertEqual(ISOTime.parse("2026-06-15T12:00:00Z"), 1_781_524_800)
        XCTAssertNil(ISOTime.parse("2026-06-15 12:00"))
    }
}

final class OneCallDecodingTests: XCTestCase {
    func testOneCallGivesWhatTheFreeEndpointsLack() throws {
        let place = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
        let snapshot = try OpenWeatherMapProvider.decode(
            oneCall: try TestPaths.fixtureBytes("openweathermap-onecall.json"), place: place,
            settings: ForecastSettings(days: 7, hours: 24)
        ).get()
        XCTAssertEqual(snapshot.current.temperatureCelsius, 24.52)
        XCTAssertEqual(snapshot.current.dewPointCelsius, 10.4)
        XCTAssertEqual(snapshot.current.uvIndex, 5.8)
        XCTAssertEqual(snapshot.current.conditionCode, 2, "803 broken clouds")
        XCTAssertEqual(snapshot.timezone, "Europe/Berlin")
        XCTAssertEqual(snapshot.hourly.map(\.hoursAhead), [1, 2], "12:00Z is the current hour")
        XCTAssertEqual(try XCTUnwrap(snapshot.hourly[1].precipitationMeters), 0.0008, accuracy: 1e-15)
        XCTAssertEqual(snapshot.hourly[1].conditionCode, 61)
        XCTAssertEqual(snapshot.daily.map(\.daysAhead), [0, 1])
        XCTAssertEqual(snapshot.daily[0].temperatureMinCelsius, 14.7)
        XCTAssertEqual(snapshot.daily[0].uvIndexMax, 6.15)
        XCTAssertEqual(try XCTUnwrap(snapshot.daily[0].precipitationSumMeters), 0.0035, accuracy: 1e-15)
        XCTAssertEqual(snapshot.daily[1].sunrise, 1_781_577_763)
        XCTAssertEqual(snapshot.daily[1].conditionCode, 51)
    }

    func testOneCallNamesTheSectionItLacksAndDoubtsAbsurdOffsets() throws {
        let place = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: TestPaths.fixture("openweathermap-onecall.json")) as? [String: Any])
        json["timezone_offset"] = Int.min
        let absurd = try OpenWeatherMapProvider.decode(
            oneCall: Array(try JSONSerialization.data(withJSONObject: json)),
            place: place, settings: ForecastSettings()
        ).get()
        XCTAssertEqual(absurd.utcOffsetSeconds, 0, "no place is that far from UTC")
        /// Decoding `json` with the default forecast settings fails for want of `section`.
        func assertLacks(_ section: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let body = Array(try JSONSerialization.data(withJSONObject: json))
            XCTAssertThrowsError(
                try OpenWeatherMapProvider.decode(oneCall: body, place: place, settings: ForecastSettings()).get(),
                file: file, line: line
            ) { error in
                XCTAssertEqual(
                    "\(error)", "openweathermap: One Call answer lacks the \(section) section", file: file, line: line)
            }
        }
        json.removeValue(forKey: "hourly")
        try assertLacks("hourly")
        let noHours = Array(try JSONSerialization.data(withJSONObject: json))
        XCTAssertNoThrow(
            try OpenWeatherMapProvider.decode(
                oneCall: noHours, place: place,
                settings: ForecastSettings(days: 7, hours: 0)
            ).get(),
            "no hours asked: no hourly section needed")
        json.removeValue(forKey: "current")
        try assertLacks("current")
    }

    func testOneCallIsAConfigChoiceForOpenWeatherMapOnly() throws {
        let yaml = "provider: {name: open-meteo, one_call: true}\nlocations: [{name: A, latitude: 1, longitude: 1}]\n"
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml, file: "c.yml")) { error in
            XCTAssertEqual("\(error)", "c.yml:1: provider.one_call: applies to openweathermap only")
        }
    }
}
