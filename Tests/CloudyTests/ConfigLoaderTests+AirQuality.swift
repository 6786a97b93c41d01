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

    func testOpenWeatherMapAirPollutionSpendsTheProvidersKeyAndItsOwnHost() throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("aq-key-\(UUID().uuidString)")
        try "k3y\n".write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let yaml = """
            provider: {name: openweathermap, api_key_file: \(keyFile.path)}
            air_quality: {source: openweathermap}
            locations:
              - {name: Brussels, latitude: 50.85, longitude: 4.35}
            """
        let config = try ConfigLoader.parse(yaml: yaml)
        XCTAssertEqual(config.airQuality?.source, .openWeatherMap)
        XCTAssertEqual(config.airQuality?.url, "https://api.openweathermap.org")
        XCTAssertEqual(config.provider.apiKey?.reveal, "k3y")
        // Another provider's key (a Pirate Weather key) never goes to OpenWeatherMap.
        let darkSky = yaml.replacingOccurrences(of: "name: openweathermap,", with: "name: dark-sky,")
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: darkSky)) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.description,
                "config:2: air_quality.source: openweathermap spends the API key of provider openweathermap; "
                    + "with provider dark-sky use source: open-meteo")
        }
        // Pollen asked for where there is none is refused, not left out without a word.
        let pollen = yaml.replacingOccurrences(
            of: "{source: openweathermap}", with: "{source: openweathermap, pollen: true}")
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: pollen)) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.description,
                "config:2: air_quality.pollen: openweathermap has no pollen; use source: open-meteo, or leave it out")
        }
        let noPollen = yaml.replacingOccurrences(
            of: "{source: openweathermap}", with: "{source: openweathermap, pollen: false}")
        XCTAssertEqual(try ConfigLoader.parse(yaml: noPollen).airQuality?.source, .openWeatherMap)
    }
}
