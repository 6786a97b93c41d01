import Foundation
import XCTest

@testable import Cloudy

final class OpenMeteoDecodingTests: XCTestCase {
    let forecast = ForecastSettings(days: 7, hours: 24)
    let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
    let london = Place(name: "London", latitude: 51.5085, longitude: -0.1257)
    let newYork = Place(name: "New York", latitude: 40.7143, longitude: -74.006)

    func decode(_ fixture: String, _ places: [Place]) throws -> [Result<WeatherSnapshot, WeatherFetchError>] {
        OpenMeteoProvider.decode(try TestPaths.fixtureBytes(fixture), places: places, forecast: forecast)
    }

    func testSinglePlaceIsDecodedIntoBaseUnits() throws {
        let snapshot = try XCTUnwrap(try decode("open-meteo-forecast.json", [berlin]).first?.get())
        let now = snapshot.current
        XCTAssertEqual(now.observedAt, 1_781_525_700)
        XCTAssertEqual(now.temperatureCelsius, 24.5)
        XCTAssertEqual(now.apparentTemperatureCelsius, 24.1)
        XCTAssertEqual(now.dewPointCelsius, 10.4)
        XCTAssertEqual(now.relativeHumidityRatio, 0.41)
        XCTAssertEqual(now.windSpeedMetersPerSecond, 13.1 / 3.6)
        XCTAssertEqual(now.windGustMetersPerSecond, 25.0 / 3.6)
        XCTAssertEqual(now.windDirectionDegrees, 262)
        XCTAssertEqual(now.pressureMslPascals, 101450)
        XCTAssertEqual(now.cloudCoverRatio, 0.52)
        XCTAssertEqual(now.precipitationMeters, 0)
        XCTAssertEqual(now.uvIndex, 5.75)
        XCTAssertEqual(now.visibilityMeters, 39520)
        XCTAssertEqual(now.isDay, true)
        XCTAssertEqual(now.conditionCode, 2)
        XCTAssertEqual(snapshot.timezone, "Europe/Berlin")
        XCTAssertEqual(snapshot.utcOffsetSeconds, 7200)

        XCTAssertEqual(snapshot.daily.map(\.daysAhead), Array(0..<7), "day 0 is today in Berlin")
        XCTAssertEqual(snapshot.daily[0].temperatureMaxCelsius, 24.6)
        XCTAssertEqual(snapshot.daily[1].temperatureMinCelsius, 13.7)
        XCTAssertEqual(snapshot.daily[6].precipitationSumMeters, 9.5 / 1000)
        XCTAssertEqual(snapshot.daily[6].conditionCode, 95)
        XCTAssertEqual(snapshot.daily[2].precipitationProbabilityRatio, 0.9)
        XCTAssertEqual(snapshot.daily[2].windGustMaxMetersPerSecond, 46.2 / 3.6)
        XCTAssertEqual(snapshot.daily[0].sunrise, 1_781_491_369)
        XCTAssertEqual(snapshot.daily[0].sunset, 1_781_551_868)
        XCTAssertEqual(snapshot.daily[0].uvIndexMax, 6.15)

        // The fixture's hourly series starts at the current hour (12:00Z, observed 12:15Z):
        // that step is hour 0 and left out; 13:00Z is hour 1.
        XCTAssertEqual(snapshot.hourly.first?.hoursAhead, 1)
        XCTAssertEqual(snapshot.hourly.first?.time, 1_781_528_400)
        XCTAssertEqual(snapshot.hourly.first?.temperatureCelsius, 24.4)
        XCTAssertEqual(snapshot.hourly.map(\.hoursAhead), Array(1...23))
        XCTAssertEqual(snapshot.hourly[3].precipitationMeters, 2.1 / 1000, "hour 4 is 16:00Z, the shower")
        XCTAssertEqual(snapshot.hourly[3].precipitationProbabilityRatio, 0.87)
        XCTAssertEqual(snapshot.hourly[3].conditionCode, 80)
    }

    func testSeveralPlacesArePairedByPosition() throws {
        let outcomes = try decode("open-meteo-forecast-multi.json", [berlin, london, newYork])
        let snapshots = try outcomes.map { try $0.get() }
        XCTAssertEqual(snapshots.map(\.timezone), ["Europe/Berlin", "Europe/London", "America/New_York"])
        XCTAssertEqual(snapshots[1].current.conditionCode, 51, "London has drizzle now")
        XCTAssertEqual(snapshots[1].current.precipitationMeters, 0.10 / 1000)
        XCTAssertEqual(snapshots[2].utcOffsetSeconds, -14400)
        XCTAssertEqual(snapshots[2].daily.first?.daysAhead, 0, "New York's day 0 starts at its own midnight")
        XCTAssertEqual(snapshots.map { $0.daily.count }, [7, 7, 7])
    }

    func testNullIsNoValueAndThePlaceStaysUp() throws {
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast.json")) as? [String: Any])
        var current = try XCTUnwrap(json["current"] as? [String: Any])
        current["temperature_2m"] = NSNull()
        current["uv_index"] = NSNull()
        json["current"] = current
        var daily = try XCTUnwrap(json["daily"] as? [String: Any])
        var maxima = try XCTUnwrap(daily["temperature_2m_max"] as? [Any])
        maxima[6] = NSNull()
        daily["temperature_2m_max"] = maxima
        json["daily"] = daily
        let body = Array(try JSONSerialization.data(withJSONObject: json))

        let snapshot = try OpenMeteoProvider.decode(body, places: [berlin], forecast: forecast)[0].get()
        XCTAssertNil(snapshot.current.temperatureCelsius)
        XCTAssertNil(snapshot.current.uvIndex)
        XCTAssertEqual(snapshot.current.apparentTemperatureCelsius, 24.1, "other values stay")
        XCTAssertNil(snapshot.daily[6].temperatureMaxCelsius)
        XCTAssertEqual(snapshot.daily[6].temperatureMinCelsius, 17.2)

        var page = MetricFamilies()
        MetricsViewModel(
            status: PlaceStatus(place: berlin, snapshot: snapshot, lastSuccess: 100, lastAttempt: 100),
            units: berlin.units, provider: .openMeteo, now: 100, staleAfter: 1800
        ).addSamples(to: &page)
        XCTAssertNil(
            page.families.first { $0.descriptor.name == "weather_temperature_celsius" }, "null is no sample, never 0")
        let up = try XCTUnwrap(page.families.first { $0.descriptor.name == "weather_up" })
        XCTAssertEqual(up.samples.map(\.value), [1])
    }

    /// Sections decode into the series Cloudy reads: a variable it does not read is skipped
    /// whatever its type (the API may add any), one it reads with the wrong type fails the place.
    func testVariablesCloudyDoesNotReadAreSkippedWhateverTheirType() throws {
        let original = try decode("open-meteo-forecast.json", [berlin])[0].get()
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast.json")) as? [String: Any])
        var hourly = try XCTUnwrap(json["hourly"] as? [String: Any])
        hourly["time_text"] = ["noon", "one"]
        hourly["nested"] = ["a": [1, 2]]
        json["hourly"] = hourly
        var units = try XCTUnwrap(json["current_units"] as? [String: Any])
        units["new_variable"] = ["not", "a", "unit"]
        json["current_units"] = units
        var current = try XCTUnwrap(json["current"] as? [String: Any])
        current["condition_text"] = "sunny"
        json["current"] = current
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        XCTAssertEqual(try OpenMeteoProvider.decode(body, places: [berlin], forecast: forecast)[0].get(), original)

        hourly["temperature_2m"] = ["warm"]
        json["hourly"] = hourly
        let broken = Array(try JSONSerialization.data(withJSONObject: json))
        XCTAssertThrowsError(try OpenMeteoProvider.decode(broken, places: [berlin], forecast: forecast)[0].get()) {
            XCTAssertTrue("\($0)".contains("temperature_2m"), "\($0)")
        }
    }

    func testErrorBodyReasonIsReported() throws {
        let clock = ManualClock()
        let provider = OpenMeteoProvider(
            Upstream(
                baseURL: "http://127.0.0.1:1", timeout: 1, client: CurlHTTPClient(userAgent: "test"),
                recorder: ExporterTelemetry(startedAt: 0), clock: clock),
            forecast: forecast)
        let response = HTTPResponse(status: 400, body: try TestPaths.fixtureBytes("open-meteo-error.json"))
        XCTAssertEqual(
            provider.httpError(response).message,
            "open-meteo: HTTP 400: Latitude must be in range of -90 to 90°. Given: 91.0.")
        XCTAssertFalse(provider.httpError(response).isRateLimit)
        let limited = HTTPResponse(
            status: 429, headers: ["retry-after": "60"],
            body: try TestPaths.fixtureBytes("open-meteo-error-429.json"))
        let error = provider.httpError(limited)
        XCTAssertEqual(
            error.message,
            "open-meteo: HTTP 429: Minutely API request limit exceeded. Please try again in one minute.")
        XCTAssertEqual(error.retryAfter, 60)
        XCTAssertTrue(error.isRateLimit)
        let dated = HTTPResponse(
            status: 503, headers: ["retry-after": "Mon, 15 Jun 2026 12:00:45 GMT"],
            body: Array("<html>".utf8))
        XCTAssertEqual(
            provider.httpError(dated).message, "open-meteo: HTTP 503", "a body that is not JSON adds nothing")
        XCTAssertEqual(provider.httpError(dated).retryAfter, 45, "an HTTP date is read against the injected clock")
    }

    func testAnArrayOfTheWrongLengthFailsTheBatch() throws {
        let outcomes = try decode("open-meteo-forecast-multi.json", [berlin, london])
        for outcome in outcomes {
            XCTAssertThrowsError(try outcome.get()) { error in
                XCTAssertEqual("\(error)", "open-meteo: answer has 3 entries for 2 places")
            }
        }
    }

    func testABrokenEntryFailsOnlyItsPlace() throws {
        var entries = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast-multi.json")) as? [Any])
        entries[1] = ["latitude": "north", "current": [1, 2]]
        var third = try XCTUnwrap(entries[2] as? [String: Any])
        third.removeValue(forKey: "daily")
        entries[2] = third
        let body = Array(try JSONSerialization.data(withJSONObject: entries))
        let outcomes = OpenMeteoProvider.decode(body, places: [berlin, london, newYork], forecast: forecast)
        XCTAssertNoThrow(try outcomes[0].get())
        XCTAssertThrowsError(try outcomes[1].get())
        XCTAssertThrowsError(try outcomes[2].get()) { error in
            XCTAssertEqual("\(error)", "open-meteo: answer lacks the daily section")
        }
    }

    /// A series that does not pair one to one with its section's times cannot say which hour or
    /// day a value is for: the place fails. Its values were published an hour early, the last
    /// hour missing.
    func testASeriesThatDoesNotPairWithItsTimesFailsThePlace() throws {
        let fixture = try TestPaths.fixtureBytes("open-meteo-forecast.json")
        func failure(_ change: (inout [String: Any]) -> Void) throws -> String? {
            var answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(fixture)) as? [String: Any])
            change(&answer)
            let body = Array(try JSONSerialization.data(withJSONObject: answer))
            return OpenMeteoProvider.decode(body, places: [berlin], forecast: forecast)[0].failureMessage
        }
        func dropFirst(_ section: String, _ variable: String) -> (inout [String: Any]) -> Void {
            { answer in
                var values = answer[section] as! [String: Any]
                values[variable] = Array((values[variable] as! [Any]).dropFirst())
                answer[section] = values
            }
        }
        XCTAssertEqual(
            try failure(dropFirst("hourly", "temperature_2m")),
            "open-meteo: answer's hourly.temperature_2m has 23 values where hourly.time has 24")
        XCTAssertEqual(
            try failure(dropFirst("daily", "time")),
            "open-meteo: answer's daily.temperature_2m_max has 7 values where daily.time has 6")
        XCTAssertNil(try failure(dropFirst("hourly", "rain")), "a series Cloudy does not read is not its concern")
    }

    func testNonJSONAnswersFailCleanly() {
        for body in ["", "   ", "<html>portal</html>", "{\"latitude\": 52.5, \"current\": {", "[1,2"] {
            let outcomes = OpenMeteoProvider.decode(Array(body.utf8), places: [berlin], forecast: forecast)
            XCTAssertThrowsError(try outcomes[0].get(), body)
        }
    }

    func testRequestAsksForEveryPlaceAtOnceWithUnixTimes() {
        let client = CurlHTTPClient(userAgent: "test")
        let provider = OpenMeteoProvider(
            Upstream(
                baseURL: "http://127.0.0.1:1", timeout: 1, client: client, recorder: ExporterTelemetry(startedAt: 0)),
            forecast: forecast)
        let url = provider.url(for: [berlin, london, newYork])
        XCTAssertTrue(
            url.hasPrefix(
                "http://127.0.0.1:1/v1/forecast?latitude=52.52,51.5085,40.7143&longitude=13.41,-0.1257,-74.006&"), url)
        XCTAssertTrue(url.contains("&timeformat=unixtime"))
        XCTAssertTrue(url.contains("&timezone=auto&"))
        XCTAssertTrue(url.contains("&forecast_days=7"))
        XCTAssertTrue(url.contains("&forecast_hours=25"), "the series starts at the current hour")
        var zoned = london
        zoned.timezone = "Europe/London"
        XCTAssertTrue(provider.url(for: [berlin, zoned]).contains("&timezone=auto,Europe/London&"))
        zoned.timezone = "Etc/GMT+5"
        XCTAssertTrue(provider.url(for: [zoned]).contains("&timezone=Etc/GMT%2B5&"), "a bare + reads as a space")
        XCTAssertEqual(WeatherAPI.coordinate(-0.00001), "0")
        XCTAssertEqual(WeatherAPI.coordinate(4.35), "4.35")
        XCTAssertEqual(WeatherAPI.coordinate(-74.00601), "-74.006")
    }

    func testDeclaredUnitsAreConvertedToBaseUnits() throws {
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast.json")) as? [String: Any])
        var units = try XCTUnwrap(json["current_units"] as? [String: Any])
        units["temperature_2m"] = "°F"
        units["wind_speed_10m"] = "mp/h"
        units["wind_gusts_10m"] = "kn"
        json["current_units"] = units
        var current = try XCTUnwrap(json["current"] as? [String: Any])
        current["temperature_2m"] = 212.0
        current["wind_speed_10m"] = 10.0
        current["wind_gusts_10m"] = 10.0
        json["current"] = current
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        let snapshot = try OpenMeteoProvider.decode(body, places: [berlin], forecast: forecast)[0].get()
        XCTAssertEqual(snapshot.current.temperatureCelsius, 100)
        XCTAssertEqual(try XCTUnwrap(snapshot.current.windSpeedMetersPerSecond), 4.4704, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(snapshot.current.windGustMetersPerSecond), 18.52 / 3.6, accuracy: 1e-12)
        // A unit Cloudy does not know is no value, not the default's: 297.65 "K" was 297.65 °C.
        units = ["temperature_2m": "K", "wind_speed_10m": "ft/s", "pressure_msl": "inHg", "visibility": "yd"]
        json["current_units"] = units
        let unknown = try OpenMeteoProvider.decode(
            Array(try JSONSerialization.data(withJSONObject: json)), places: [berlin], forecast: forecast)[0].get()
        XCTAssertNil(unknown.current.temperatureCelsius)
        XCTAssertNil(unknown.current.windSpeedMetersPerSecond)
        XCTAssertNil(unknown.current.pressureMslPascals)
        XCTAssertNil(unknown.current.visibilityMeters)
        XCTAssertEqual(unknown.current.windGustMetersPerSecond, 10 / 3.6, "an undeclared unit is the default")
    }
}

extension OpenMeteoDecodingTests {
    /// Open-Meteo's hours are local whole hours: in Kathmandu (UTC+5:45) they fall at :15 past
    /// UTC hours. At 17:45 local the series starts at 17:00 local, and 18:00 is hour 1.
    func testHoursCountFromTheLocalWholeHourInAZoneOffByAQuarterHour() throws {
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast.json")) as? [String: Any])
        json["utc_offset_seconds"] = 20_700
        json["timezone"] = "Asia/Kathmandu"
        var current = try XCTUnwrap(json["current"] as? [String: Any])
        current["time"] = 1_781_524_800  // 12:00Z, 17:45 local
        json["current"] = current
        var hourly = try XCTUnwrap(json["hourly"] as? [String: Any])
        let times = try XCTUnwrap(hourly["time"] as? [Double])
        hourly["time"] = times.map { $0 - 2_700 }  // 11:15Z (17:00 local), 12:15Z, …
        json["hourly"] = hourly
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        let snapshot = try OpenMeteoProvider.decode(body, places: [berlin], forecast: forecast)[0].get()
        XCTAssertEqual(snapshot.hourly.first?.time, 1_781_524_800 + 900, "18:00 local, a quarter hour ahead")
        XCTAssertEqual(snapshot.hourly.map(\.hoursAhead), Array(1...23), "every step after the current hour")
    }
}
