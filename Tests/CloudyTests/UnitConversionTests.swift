import XCTest

@testable import Cloudy

/// The exact factors of the contract: °F = °C × 9/5 + 32; 1 m/s = 3.6 km/h;
/// 1 mph = 1.609344 km/h; 1 kn = 1.852 km/h.
final class UnitConversionTests: XCTestCase {
    func testTemperature() {
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(0), 32)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(100), 212)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(-40), -40)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(24.5), 76.1, accuracy: 1e-12)
        XCTAssertEqual(TemperatureUnit.celsius.fromCelsius(24.5), 24.5)
    }

    func testWindSpeedFromMetersPerSecond() {
        XCTAssertEqual(WindSpeedUnit.metersPerSecond.fromMetersPerSecond(10), 10)
        XCTAssertEqual(WindSpeedUnit.kilometersPerHour.fromMetersPerSecond(10), 36)
        XCTAssertEqual(WindSpeedUnit.milesPerHour.fromMetersPerSecond(0.44704), 1, accuracy: 1e-15)
        XCTAssertEqual(WindSpeedUnit.knots.fromMetersPerSecond(1.852 / 3.6), 1, accuracy: 1e-15)
        XCTAssertEqual(WindSpeedUnit.milesPerHour.fromMetersPerSecond(10), 36 / 1.609344, accuracy: 1e-12)
        XCTAssertEqual(WindSpeedUnit.knots.fromMetersPerSecond(10), 36 / 1.852, accuracy: 1e-12)
    }

    func testWindSpeedRoundTripsThroughTheBaseUnit() {
        for unit in WindSpeedUnit.allCases {
            for value in [0.0, 0.1, 13.1, 25.0, 120.7] {
                let back = unit.fromMetersPerSecond(unit.toMetersPerSecond(value))
                XCTAssertEqual(back, value, accuracy: max(1e-12, value * 1e-14), "\(unit) \(value)")
            }
        }
    }

    func testKilometresPerHourFromTheAPIGoToEveryUnitExactly() {
        // What the exporter does with Open-Meteo's km/h: to m/s, then to the unit shown.
        let kmh = 13.1
        let base = WindSpeedUnit.kilometersPerHour.toMetersPerSecond(kmh)
        XCTAssertEqual(WindSpeedUnit.metersPerSecond.fromMetersPerSecond(base), kmh / 3.6, accuracy: 1e-15)
        XCTAssertEqual(WindSpeedUnit.kilometersPerHour.fromMetersPerSecond(base), kmh, accuracy: 1e-13)
        XCTAssertEqual(WindSpeedUnit.milesPerHour.fromMetersPerSecond(base), kmh / 1.609344, accuracy: 1e-13)
        XCTAssertEqual(WindSpeedUnit.knots.fromMetersPerSecond(base), kmh / 1.852, accuracy: 1e-13)
    }

    func testStatusPageNumbersAndClock() {
        XCTAssertEqual(ValueFormat.number(24.46), "24.5")
        XCTAssertEqual(ValueFormat.number(-0.04), "0.0")
        XCTAssertEqual(ValueFormat.number(-3.25), "-3.3", "halves round away from zero")
        // 1781525700 + 7200 = 14:15 local in Berlin.
        XCTAssertEqual(ValueFormat.clock(1_781_525_700 + 7200, notation: .h24), "14:15")
        XCTAssertEqual(ValueFormat.clock(1_781_525_700 + 7200, notation: .h12), "2:15 PM")
        XCTAssertEqual(ValueFormat.clock(0, notation: .h12), "12:00 AM")
    }
}
