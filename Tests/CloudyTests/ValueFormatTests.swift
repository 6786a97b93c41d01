import XCTest

@testable import Cloudy

/// How the pages write values: units and their conversions, clock times in both notations,
/// compass points, day names in the place's calendar, and `–` for a value never sent.
final class ValueFormatTests: XCTestCase {
    func testTemperatureInEveryUnitConfiguredInOrder() {
        XCTAssertEqual(ValueFormat.temperature(24.46, [.celsius]), "24.5 °C")
        XCTAssertEqual(ValueFormat.temperature(24.46, [.fahrenheit]), "76.0 °F")
        XCTAssertEqual(ValueFormat.temperature(-40, [.fahrenheit, .celsius]), "-40.0 °F / -40.0 °C")
        XCTAssertEqual(ValueFormat.temperature(0, [.celsius, .fahrenheit]), "0.0 °C / 32.0 °F")
        XCTAssertEqual(ValueFormat.temperature(-0.04, [.celsius]), "0.0 °C", "never -0.0")
        XCTAssertEqual(ValueFormat.temperature(nil, [.celsius, .fahrenheit]), "–")
    }

    func testWindSpeedInEveryUnit() {
        // 10 m/s = 36 km/h = 22.369… mph = 19.438… kn (exact definitions of the mile and the knot).
        XCTAssertEqual(ValueFormat.windSpeed(10, [.metersPerSecond]), "10.0 m/s")
        XCTAssertEqual(ValueFormat.windSpeed(10, [.kilometersPerHour]), "36.0 km/h")
        XCTAssertEqual(ValueFormat.windSpeed(10, [.milesPerHour]), "22.4 mph")
        XCTAssertEqual(ValueFormat.windSpeed(10, [.knots]), "19.4 kn")
        XCTAssertEqual(ValueFormat.windSpeed(10, [.knots, .metersPerSecond]), "19.4 kn / 10.0 m/s")
        XCTAssertEqual(ValueFormat.windSpeed(nil, [.knots]), "–")
    }

    func testOtherMeasuresFromTheirBaseUnits() {
        XCTAssertEqual(ValueFormat.percent(0.654), "65 %")
        XCTAssertEqual(ValueFormat.percent(1), "100 %")
        XCTAssertEqual(ValueFormat.precipitation(0.0003), "0.3 mm")
        XCTAssertEqual(ValueFormat.pressure(101_325), "1013 hPa")
        XCTAssertEqual(ValueFormat.visibility(24_140), "24.1 km")
        XCTAssertEqual(ValueFormat.visibility(49), "49 m", "fog: meters, not 0.0 km")
        XCTAssertEqual(ValueFormat.windDirection(270, speed: 3.6), "W")
        XCTAssertNil(ValueFormat.windDirection(360, speed: 0), "calm: no direction, not N")
        XCTAssertNil(ValueFormat.windDirection(nil, speed: 3.6))
        XCTAssertNil(ValueFormat.windDirection(270, speed: nil))
        XCTAssertEqual(ValueFormat.visibility(999.4), "999 m")
        XCTAssertEqual(ValueFormat.visibility(999.6), "1.0 km")
        XCTAssertEqual(ValueFormat.uvIndex(5.25), "5.3")
        for absent in [
            ValueFormat.percent(nil), ValueFormat.precipitation(nil), ValueFormat.pressure(nil),
            ValueFormat.visibility(nil), ValueFormat.uvIndex(nil), ValueFormat.compassPoint(nil),
            ValueFormat.clock(nil, utcOffset: 0, .h24), ValueFormat.number(.nan), ValueFormat.whole(.infinity),
        ] {
            XCTAssertEqual(absent, "–")
        }
    }

    func testClockAtMidnightAndNoonInBothNotations() {
        let midnight = 1_781_481_600.0  // 2026-06-15 00:00 UTC
        XCTAssertEqual(ValueFormat.clock(midnight, utcOffset: 0, .h24), "00:00")
        XCTAssertEqual(ValueFormat.clock(midnight, utcOffset: 0, .h12), "12:00 AM")
        XCTAssertEqual(ValueFormat.clock(midnight + 43200, utcOffset: 0, .h24), "12:00")
        XCTAssertEqual(ValueFormat.clock(midnight + 43200, utcOffset: 0, .h12), "12:00 PM")
        XCTAssertEqual(ValueFormat.clock(midnight - 60, utcOffset: 0, .h12), "11:59 PM")
        XCTAssertEqual(ValueFormat.clock(midnight + 43140, utcOffset: 0, .h12), "11:59 AM")
        XCTAssertEqual(ValueFormat.clock(midnight + 46740, utcOffset: 0, .h12), "12:59 PM")
        XCTAssertEqual(ValueFormat.clock(midnight + 3900, utcOffset: 0, .h12), "1:05 AM")
        // The place's local time: 12:15 UTC is 14:15 in Berlin in summer, 07:45 in St. John's.
        XCTAssertEqual(ValueFormat.clock(midnight + 44100, utcOffset: 7200, .h24), "14:15")
        XCTAssertEqual(ValueFormat.clock(midnight + 44100, utcOffset: -16200, .h12), "7:45 AM")
        XCTAssertEqual(ValueFormat.clock(midnight + 3600, utcOffset: -7200, .h24), "23:00", "the day before")
    }

    func testCompassPointsAtTheSixteenBoundaries() {
        // Each point starts 11.25° before its own bearing: exactly there it is that point, just
        // before it still the previous one.
        for (index, point) in ValueFormat.compassPoints.enumerated() {
            let boundary = (Double(index) * 22.5 - 11.25 + 360).truncatingRemainder(dividingBy: 360)
            XCTAssertEqual(ValueFormat.compassPoint(boundary), point, "at \(boundary)°")
            XCTAssertEqual(ValueFormat.compassPoint(Double(index) * 22.5), point, "on its bearing")
            let previous = ValueFormat.compassPoints[(index + 15) % 16]
            XCTAssertEqual(ValueFormat.compassPoint(boundary - 0.01), previous, "just before \(boundary)°")
        }
        XCTAssertEqual(ValueFormat.compassPoint(360), "N")
        XCTAssertEqual(ValueFormat.compassPoint(-45), "NW")
        XCTAssertEqual(ValueFormat.compassPoint(315), "NW")
        XCTAssertEqual(ValueFormat.compassPoint(.nan), "–")
    }

    func testDayNamesCountFromThePlacesToday() throws {
        let monday = try XCTUnwrap(ForecastTime.localDay(1_781_481_600, offset: 0))  // 2026-06-15 was a Monday
        XCTAssertEqual(ValueFormat.dayName(monday, today: monday), "Today")
        XCTAssertEqual(ValueFormat.dayName(monday + 1, today: monday), "Tomorrow")
        XCTAssertEqual(
            (2..<9).map { ValueFormat.dayName(monday + $0, today: monday) },
            ["Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday"])
        XCTAssertEqual(ValueFormat.dayName(monday, today: monday - 3), "Monday")
        // 23:30 UTC on that Monday is already Tuesday in Auckland (UTC+12) and still Monday in Honolulu.
        let lateMonday = 1_781_481_600.0 + 84600
        XCTAssertEqual(ForecastTime.localDay(lateMonday, offset: 43200), monday + 1)
        XCTAssertEqual(ForecastTime.localDay(lateMonday, offset: -36000), monday)
        XCTAssertEqual(ForecastTime.localDay(1_781_481_600 - 1, offset: 0), monday - 1, "one second before")
    }

    func testAges() {
        XCTAssertEqual(ValueFormat.age(45.9), "45 s")
        XCTAssertEqual(ValueFormat.age(720), "12 min")
        XCTAssertEqual(ValueFormat.age(7500), "2 h 5 min")
        XCTAssertEqual(ValueFormat.age(7200), "2 h")
        XCTAssertEqual(ValueFormat.age(3 * 86400 + 4 * 3600 + 59), "3 d 4 h")
    }
}
