import XCTest
@testable import Cloudy

final class UnitConversionTests: XCTestCase {
    func testTemperatureUsesExactFactor() {
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(0), 32)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(100), 212)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(-40), -40)
        XCTAssertEqual(TemperatureUnit.fahrenheit.fromCelsius(24.5), 24.5 * 9 / 5 + 32)
        XCTAssertEqual(TemperatureUnit.celsius.fromCelsius(24.5), 24.5)
    }
}
