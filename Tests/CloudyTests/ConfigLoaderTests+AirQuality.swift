import XCTest

@testable import Cloudy

/// `air_quality:` as the loader reads it: off unless the block is there with a value.
extension ConfigLoaderTests {
    func testAirQualityIsOffUnlessTheBlockIsThereAndThenDefaultsToOpenMeteoWithPollen() throws {
        let places = "locations:\n  - {name: Brussels, latitude: 50.85, longitude: 4.35}\n"
        XCTAssertNil(try ConfigLoader.parse(yaml: places).airQuality)
        let on = try ConfigLoader.parse(yaml: "air_quality: {}\n" + places).airQuality
        XCTAssertEqual(
            on, AirQualitySettings(source: .openMeteo, url: "https://air-quality-api.open-meteo.com", pollen: true))
        // An empty value counts as absent, as for every key (a template that rendered nothing).
        for empty in ["air_quality:\n", "air_quality: ~\n", "air_quality: null\n"] {
            XCTAssertNil(try ConfigLoader.parse(yaml: empty + places).airQuality, empty)
        }
    }
}
