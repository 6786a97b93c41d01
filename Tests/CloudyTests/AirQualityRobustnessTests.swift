import Foundation
import XCTest

@testable import Cloudy

/// The air-quality decoders under the same damaged answers as the weather's: a clean error or a
/// report with days and hours in range, never a crash.
extension DecoderRobustnessTests {
    func testMutatedAirQualityAnswersNeverCrash() throws {
        let settings = ForecastSettings()
        let multi = try TestPaths.fixtureBytes("open-meteo-air-quality-multi.json")
        let pair = [places[0], places[2]]
        var decoded = 0
        for body in mutations(of: multi, rounds: 1500, seed: 23) {
            for case .success(let report) in OpenMeteoAirQuality.decode(body, places: pair, forecast: settings) {
                decoded += 1
                XCTAssertTrue(report.daily.allSatisfy { (0..<7).contains($0.daysAhead) })
                XCTAssertTrue(report.hourly.allSatisfy { (1...24).contains($0.hoursAhead) })
            }
        }
        XCTAssertGreaterThan(decoded, 100, "decoded of 1,500 damaged answers (233 places decode today): the checks ran")
        let owm = try TestPaths.fixtureBytes("openweathermap-air-pollution.json")
        for body in mutations(of: owm, rounds: 500, seed: 29) {
            _ = OpenWeatherMapAirPollution.decode(body)
        }
        let single = String(decoding: try TestPaths.fixtureBytes("open-meteo-air-quality.json"), as: UTF8.self)
        for absurd in ["1e308", "-1e308", "99999999999999999999"] {
            for (field, value) in [
                ("1781528400", absurd), ("\"utc_offset_seconds\":7200", "\"utc_offset_seconds\":\(absurd)"),
            ] {
                let body = Array(single.replacingOccurrences(of: field, with: value).utf8)
                _ = OpenMeteoAirQuality.decode(body, places: [places[0]], forecast: settings)
            }
            XCTAssertTrue(Pollutant.gramsPerCubicMeter(micrograms: Double(absurd)!).isFinite)
        }
    }
}
