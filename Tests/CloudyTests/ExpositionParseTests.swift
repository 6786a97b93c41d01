import XCTest

/// The tests' reader of exposition text (`Exposition.parse`, Exposition.swift): every
/// end-to-end check of a value goes through it, so its rules are pinned here.
final class ExpositionParseTests: XCTestCase {
    func testEachSampleLineIsSeriesBeforeTheLastSpaceAndValueAfter() {
        let text = """
            # HELP weather_up Whether the last refresh worked.
            # TYPE weather_up gauge
            # a comment that ends in a number 5
            weather_up{location="New York"} 1
            weather_temperature_celsius{location="☁️ Wolkig 🌧"} -3.25

            weather_wind{location="a b c"} +Inf
            weather_nan NaN
            not a number here x
            lonely
            weather_last 1e3
            """
        var samples = Exposition.parse(text)
        XCTAssertTrue(samples.removeValue(forKey: "weather_nan")?.isNaN ?? false)
        XCTAssertEqual(
            samples,
            [
                "weather_up{location=\"New York\"}": 1,
                "weather_temperature_celsius{location=\"☁️ Wolkig 🌧\"}": -3.25,
                "weather_wind{location=\"a b c\"}": .infinity,
                "weather_last": 1000,
            ], "comments, the blank line and unreadable values are skipped")
        XCTAssertEqual(Exposition.parse(""), [:])
        XCTAssertEqual(Exposition.parse("a 1\n"), ["a": 1])
    }
}
