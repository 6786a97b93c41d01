import XCTest

@testable import Cloudy

/// A hand-made snapshot of one place, in base units: what the view models are given.
enum PlaceSnapshots {
    /// Monday 2026-06-15 12:15 UTC; the place is 2 h east of UTC (Berlin in summer).
    static let observedAt = 1_781_525_700.0
    static let localMidnight = 1_781_481_600.0 - 7200

    static let full = WeatherSnapshot(
        current: CurrentConditions(
            observedAt: observedAt, temperatureCelsius: 24.46, apparentTemperatureCelsius: 25.02,
            dewPointCelsius: 13.6, relativeHumidityRatio: 0.51, windSpeedMetersPerSecond: 3.6,
            windGustMetersPerSecond: 8.1, windDirectionDegrees: 280, pressureMslPascals: 101_520,
            cloudCoverRatio: 0.4, precipitationMeters: 0.0002, uvIndex: 5.2, visibilityMeters: 24_140, isDay: true,
            conditionCode: 2),
        daily: (0..<3).map { day in
            DailyForecast(
                daysAhead: day, date: localMidnight + Double(day) * 86400, temperatureMaxCelsius: 24.6,
                temperatureMinCelsius: 14.7, precipitationSumMeters: 0.0035, precipitationProbabilityRatio: 0.87,
                windSpeedMaxMetersPerSecond: 3.8, windGustMaxMetersPerSecond: 7.8, uvIndexMax: 6.2, conditionCode: 80,
                sunrise: localMidnight + Double(day) * 86400 + 4 * 3600 + 42 * 60,
                sunset: localMidnight + Double(day) * 86400 + 21 * 3600 + 31 * 60)
        },
        hourly: (1...3).map { hour in
            HourlyForecast(
                hoursAhead: hour, time: 1_781_524_800 + Double(hour) * 3600, temperatureCelsius: 24 - Double(hour),
                precipitationProbabilityRatio: 0.1, precipitationMeters: 0, windSpeedMetersPerSecond: 3,
                conditionCode: 3)
        },
        timezone: "Europe/Berlin", utcOffsetSeconds: 7200)

    /// Only a temperature: every other value is one the provider did not send.
    static let sparse = WeatherSnapshot(
        current: CurrentConditions(temperatureCelsius: 10),
        daily: [DailyForecast(daysAhead: 0), DailyForecast(daysAhead: 1), DailyForecast(daysAhead: 2)],
        hourly: [HourlyForecast(hoursAhead: 1, time: observedAt + 2700)], utcOffsetSeconds: 7200)
}

final class StatusViewModelTests: XCTestCase {
    let place = Place(name: "Berlin", latitude: 52.52, longitude: 13.41)
    let now = PlaceSnapshots.observedAt + 60

    func card(_ status: PlaceStatus, units: UnitSettings = .init()) -> StatusViewModel {
        StatusViewModel(status: status, units: units, now: now, staleAfter: 1800)
    }

    func testUpShowsTheWeatherInThePlacesUnits() throws {
        let status = PlaceStatus(
            place: place, snapshot: PlaceSnapshots.full, lastSuccess: now - 60, lastAttempt: now - 60)
        let shown = card(status, units: UnitSettings(temperature: [.fahrenheit], windSpeed: [.knots], time: .h12))
        XCTAssertEqual(shown.state, .up)
        XCTAssertNil(shown.stateDetail)
        XCTAssertEqual(
            shown.weather,
            StatusViewModel.Weather(
                icon: "partly-cloudy-day", condition: "Partly cloudy", temperature: "76.0 °F", low: "58.5 °F",
                high: "76.3 °F", wind: "W 7.0 kn", observedAt: "2:15 PM", thresholdsAhead: nil))
    }

    /// The card of a place whose last refresh failed with `error`, `age` seconds after its last success.
    func failing(lastSuccessAgo age: Double, error: String) -> StatusViewModel {
        card(
            PlaceStatus(
                place: place, snapshot: PlaceSnapshots.full, lastSuccess: now - age, lastAttempt: now - 60,
                lastError: error))
    }

    func testDownSaysWhyAndKeepsWeatherYoungerThanStaleAfter() {
        let shown = failing(lastSuccessAgo: 900, error: "open-meteo: HTTP 503")
        XCTAssertEqual([shown.state.rawValue, shown.stateDetail], ["down", "open-meteo: HTTP 503"])
        XCTAssertEqual(shown.weather?.temperature, "24.5 °C")
    }

    func testStaleSaysHowOldTheLastGoodDataIsAndShowsNoWeather() {
        let shown = failing(lastSuccessAgo: 7500, error: "timeout")
        XCTAssertEqual(
            [shown.state.rawValue, shown.stateDetail],
            ["stale", "last good data 2 h 5 min old; last refresh failed: timeout"])
        XCTAssertNil(shown.weather)
    }

    func testWaitingBeforeTheFirstAttempt() {
        let shown = card(PlaceStatus(place: place))
        XCTAssertEqual(shown.state, .waiting)
        XCTAssertEqual(shown.stateDetail, "waiting for the first refresh")
        XCTAssertNil(shown.weather)
    }

    func testWaitingWhilePacedSaysWhenItsBatchGoes() {
        var status = PlaceStatus(place: place)
        status.pacedUntil = now + 51
        XCTAssertEqual(
            card(status).stateDetail,
            "waiting for the first refresh; the next batch goes at \(QuietPeriod.utcTime(now + 51)), "
                + "paced to stay within the provider's quota")
    }

    func testAbsentValuesAreDashes() throws {
        let status = PlaceStatus(
            place: place, snapshot: PlaceSnapshots.sparse, lastSuccess: now, lastAttempt: now)
        XCTAssertEqual(
            card(status).weather,
            StatusViewModel.Weather(
                icon: "unknown", condition: "–", temperature: "10.0 °C", low: "–", high: "–", wind: "–",
                observedAt: "–", thresholdsAhead: nil))
    }

    func testLinksPercentEncodeAnyNameIntoOneSegmentAndBack() {
        let names = [
            "New York", "<script>alert(1)</script>", "a/b", "50% \"quoted\" & 'single'", "Zürich ☁️", "القاهرة",
            "?#[]@!$&'()*+,;=",
        ]
        for name in names {
            let link = StatusViewModel.link(to: name)
            XCTAssertTrue(link.hasPrefix("/places/"))
            let segment = link.dropFirst("/places/".count)
            XCTAssertTrue(segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%".contains($0)) })
            XCTAssertEqual(StatusViewModel.percentDecoded(segment), name)
        }
        XCTAssertEqual(StatusViewModel.link(to: "New York"), "/places/New%20York")
        XCTAssertEqual(StatusViewModel.link(to: "a/b"), "/places/a%2Fb")
        XCTAssertNil(StatusViewModel.percentDecoded("%"), "cut short")
        XCTAssertNil(StatusViewModel.percentDecoded("%+1"), "not hex")
        XCTAssertNil(StatusViewModel.percentDecoded("%FF"), "not UTF-8")
    }
}

final class DayViewModelTests: XCTestCase {
    func testNowInThePlacesUnitsWithCompassPointAndLocalTime() {
        let units = UnitSettings(temperature: [.celsius, .fahrenheit], windSpeed: [.kilometersPerHour], time: .h12)
        let day = DayViewModel(snapshot: PlaceSnapshots.full, units: units, hours: 24)
        XCTAssertEqual(day.temperature, "24.5 °C / 76.0 °F")
        XCTAssertEqual(day.feelsLike, "25.0 °C / 77.0 °F")
        XCTAssertEqual(day.condition, "Partly cloudy")
        XCTAssertEqual(day.icon, "partly-cloudy-day")
        XCTAssertEqual(
            day.readings.map { "\($0.label): \($0.value)" },
            [
                "Humidity: 51 %", "Dew point: 13.6 °C / 56.5 °F", "Wind: 13.0 km/h from W", "Gusts: 29.2 km/h",
                "Pressure: 1015 hPa", "Cloud cover: 40 %", "UV index: 5.2", "Visibility: 24.1 km",
                "Precipitation: 0.2 mm", "Observed at: 2:15 PM",
            ])
    }

    func testHoursInLocalTimeUpToTheConfiguredCount() {
        let day = DayViewModel(snapshot: PlaceSnapshots.full, units: UnitSettings(time: .h24), hours: 2)
        XCTAssertEqual(
            day.hours,
            [
                DayViewModel.Hour(
                    time: "15:00", icon: "cloudy", condition: "Overcast", temperature: "23.0 °C",
                    precipitationProbability: "10 %", precipitation: "0.0 mm", wind: "3.0 m/s"),
                DayViewModel.Hour(
                    time: "16:00", icon: "cloudy", condition: "Overcast", temperature: "22.0 °C",
                    precipitationProbability: "10 %", precipitation: "0.0 mm", wind: "3.0 m/s"),
            ])
    }

    func testAbsentValuesAreDashes() {
        let day = DayViewModel(snapshot: PlaceSnapshots.sparse, units: .init(), hours: 24)
        XCTAssertEqual([day.temperature, day.feelsLike, day.condition, day.icon], ["10.0 °C", "–", "–", "unknown"])
        XCTAssertEqual(day.readings.map(\.value), Array(repeating: "–", count: 10))
        XCTAssertEqual(
            day.hours.first,
            DayViewModel.Hour(
                time: "15:00", icon: "unknown", condition: "–", temperature: "–", precipitationProbability: "–",
                precipitation: "–", wind: "–"))
    }
}

final class WeekViewModelTests: XCTestCase {
    func testTodayTomorrowThenWeekdaysWithLocalSunTimes() {
        let week = WeekViewModel(
            snapshot: PlaceSnapshots.full, units: UnitSettings(time: .h12), thresholds: .builtIn,
            now: PlaceSnapshots.observedAt)
        XCTAssertEqual(week.days.map(\.name), ["Today", "Tomorrow", "Wednesday"])
        XCTAssertEqual(
            week.days[0],
            WeekViewModel.Day(
                name: "Today", icon: "showers", condition: "Slight rain showers", low: "14.7 °C",
                high: "24.6 °C", precipitation: "3.5 mm", precipitationProbability: "87 %", wind: "3.8 m/s",
                gusts: "7.8 m/s", uvIndex: "6.2", sunrise: "4:42 AM", sunset: "9:31 PM", crossings: [], marks: "",
                rowClass: nil))
    }

    /// Auckland (UTC+12) at 23:30 UTC on Monday is Tuesday 11:30: its day 0 is a Tuesday, so
    /// day 2 is Thursday, whatever the date is at UTC or on the server.
    func testWeekdaysAreThoseOfThePlacesCalendarAcrossMidnight() {
        let lateMondayUTC = 1_781_481_600.0 + 84600
        let aucklandMidnight = 1_781_481_600.0 + 86400 - 43200  // Tuesday 00:00 in Auckland
        func week(dates: Bool, offset: Int) -> [String] {
            let midnight = offset == 43200 ? aucklandMidnight : 1_781_481_600.0 - Double(offset)
            let snapshot = WeatherSnapshot(
                current: CurrentConditions(),
                daily: (0..<4).map { DailyForecast(daysAhead: $0, date: dates ? midnight + Double($0) * 86400 : nil) },
                utcOffsetSeconds: offset)
            return WeekViewModel(snapshot: snapshot, units: .init(), thresholds: .builtIn, now: lateMondayUTC).days.map(
                \.name)
        }
        XCTAssertEqual(week(dates: true, offset: 43200), ["Today", "Tomorrow", "Thursday", "Friday"])
        XCTAssertEqual(week(dates: false, offset: 43200), ["Today", "Tomorrow", "Thursday", "Friday"])
        // Honolulu (UTC−10) at the same moment is still Monday 13:30.
        XCTAssertEqual(week(dates: false, offset: -36000), ["Today", "Tomorrow", "Wednesday", "Thursday"])
        XCTAssertEqual(week(dates: true, offset: -36000), ["Today", "Tomorrow", "Wednesday", "Thursday"])
    }

    /// A day's date is local midnight; with a daylight-saving change in the week the snapshot's
    /// offset is an hour off for later days, which must not move them to the day before.
    func testADaylightSavingChangeInTheWeekKeepsTheWeekdays() {
        let offset = 7200
        let midnight = 1_781_481_600.0 - Double(offset)
        let daily = (0..<4).map { day in
            // From day 2 on the zone is an hour further west: midnight comes an hour later in UTC.
            DailyForecast(daysAhead: day, date: midnight + Double(day) * 86400 + (day >= 2 ? 3600 : 0))
        }
        let snapshot = WeatherSnapshot(current: CurrentConditions(), daily: daily, utcOffsetSeconds: offset)
        let names = WeekViewModel(snapshot: snapshot, units: .init(), thresholds: .builtIn, now: midnight + 3600).days
            .map(\.name)
        XCTAssertEqual(names, ["Today", "Tomorrow", "Wednesday", "Thursday"])
    }

    func testAbsentValuesAreDashes() {
        let week = WeekViewModel(
            snapshot: PlaceSnapshots.sparse, units: .init(), thresholds: .builtIn, now: PlaceSnapshots.observedAt)
        let day = week.days[2]
        XCTAssertEqual(day.name, "Wednesday")
        XCTAssertEqual(
            [
                day.condition, day.low, day.high, day.precipitation, day.precipitationProbability, day.wind, day.gusts,
                day.uvIndex, day.sunrise, day.sunset,
            ], Array(repeating: "–", count: 10))
        XCTAssertEqual(day.icon, "unknown")
    }

    /// Berlin refreshed before daylight saving begins (29 March 2026, 01:00 UTC): the answer's
    /// offset is CET's, but the clock times after the change are CEST's, by the zone's rules.
    func testClockTimesAfterADaylightSavingChangeAreInTheNewOffset() {
        let change = 1_774_746_000.0  // 2026-03-29T01:00:00Z
        let hourly = (1...3).map { HourlyForecast(hoursAhead: $0, time: change - 3600 + Double($0 - 1) * 3600) }
        let daily = [DailyForecast(daysAhead: 1, sunrise: 1_774_845_300)]  // 2026-03-30T04:35:00Z
        var snapshot = WeatherSnapshot(
            current: CurrentConditions(observedAt: change - 1800), daily: daily, hourly: hourly,
            timezone: "Europe/Berlin", utcOffsetSeconds: 3600)
        let day = DayViewModel(snapshot: snapshot, units: .init(), hours: 3)
        XCTAssertEqual(day.hours.map(\.time), ["01:00", "03:00", "04:00"], "02:00 does not exist that night")
        XCTAssertEqual(day.readings.last?.value, "01:30", "observed before the change")
        let week = WeekViewModel(snapshot: snapshot, units: .init(), thresholds: .builtIn, now: change - 1800)
        XCTAssertEqual(week.days.first?.sunrise, "06:35")
        // Without a zone, the answer's offset is all there is.
        snapshot.timezone = nil
        XCTAssertEqual(
            DayViewModel(snapshot: snapshot, units: .init(), hours: 3).hours.map(\.time), ["01:00", "02:00", "03:00"])
    }
}
