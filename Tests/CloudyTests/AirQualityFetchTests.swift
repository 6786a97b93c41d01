import Foundation
import Logging
import XCTest

@testable import Cloudy

/// The air-quality sources against the fake APIs (`Tests/Fakes/weather_apis/air_quality.py`,
/// `openweathermap.py`) over 127.0.0.1 through the real libcurl client: batching, nulls,
/// faults, a place outside Europe, the key, and the calls counted.
final class AirQualityFetchTests: FakeWeatherTestCase {
    let logger = Logger(label: "test")
    let telemetry = ExporterTelemetry(startedAt: 0)

    var upstream: Upstream {
        Upstream(
            baseURL: fake.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: "cloudy-tests"), recorder: telemetry)
    }

    func openMeteo(pollen: Bool = true) -> OpenMeteoAirQuality {
        OpenMeteoAirQuality(
            upstream, forecast: ForecastSettings(days: 3, hours: 2), pollen: pollen, callsCountedAs: .openMeteo)
    }

    /// `count` places on a line through Europe, each a little further east.
    func places(_ count: Int) -> [Place] {
        (0..<count).map { Place(name: "P\($0)", latitude: 50, longitude: -10 + Double($0) * 0.25) }
    }

    func requestsOnThePage(_ provider: String, code: String) -> Double? {
        telemetry.requestsOnThePage(provider, code: code)
    }

    func airQualityRequests() throws -> [[String: Any]] {
        try fake.requests().filter { $0["path"] as? String == "/v1/air-quality" }
    }

    func testOneHundredAndOnePlacesTakeTwoRequestsAndCostTheirWeight() throws {
        let source = openMeteo()
        let outcomes = source.fetch(places(101), logger: logger)
        XCTAssertEqual(outcomes.count, 101)
        for outcome in outcomes { XCTAssertNoThrow(try outcome.get()) }
        let requests = try airQualityRequests()
        XCTAssertEqual(requests.count, 2)
        let latitudes = requests.map {
            (($0["query"] as? [String: String])?["latitude"] ?? "").split(separator: ",").count
        }
        XCTAssertEqual(latitudes, [100, 1])
        XCTAssertEqual(
            telemetry.callCount(provider: .openMeteo), 101 * 1.6, accuracy: 1e-9,
            "counted on Open-Meteo's quota, where the forecast's calls go")
        XCTAssertEqual(requestsOnThePage("open-meteo-air-quality", code: "200"), 2, "requests under its own name")
        XCTAssertEqual(try outcomes[100].get().indices.european, 58)
    }

    func testAPlaceOutsideEuropeHasNoPollenWhileItsNeighbourHas() throws {
        let places = [
            Place(name: "Berlin", latitude: 52.52, longitude: 13.41),
            Place(name: "New York", latitude: 40.7143, longitude: -74.006),
        ]
        let outcomes = openMeteo().fetch(places, logger: logger)
        XCTAssertEqual(try outcomes[0].get().pollen[.grass], 35.2)
        XCTAssertEqual(try outcomes[1].get().pollen, [:])
        XCTAssertEqual(try outcomes[1].get().daily.first?.pollenMax, [:])
        XCTAssertEqual(try outcomes[1].get().concentrations[.ozone] ?? .nan, 118e-6, accuracy: 1e-15)
    }

    func testAZoneWithAPlusReachesTheAPIAsWritten() throws {
        // In a query a bare `+` reads as a space: "Etc/GMT 5" is no zone, and the API answers 400.
        var places = places(2)
        places[0].timezone = "Etc/GMT+5"
        places[1].timezone = "Europe/Berlin"
        for outcome in openMeteo().fetch(places, logger: logger) { XCTAssertNil(outcome.failureMessage) }
        let query = try XCTUnwrap(try airQualityRequests().first?["query"] as? [String: String])
        XCTAssertEqual(query["timezone"], "Etc/GMT+5,Europe/Berlin")
    }

    func testNullsAreNoSamplesAndStillASuccess() throws {
        try fake.control("fault", #"{"mode":"nulls","path":"/v1/air-quality"}"#)
        let report = try openMeteo().fetch(places(2), logger: logger)[1].get()
        XCTAssertEqual(report.indices, AirQualityIndices())
        XCTAssertEqual(report.concentrations, [:])
        XCTAssertEqual(report.pollen, [:])
        XCTAssertEqual(report.hourly.map(\.indices), [AirQualityIndices(), AirQualityIndices()])
        XCTAssertEqual(report.observedAt, 1_781_524_800, "times stay")
    }

    func testARateLimitStopsTheLaterBatchesAndCountsOneCall() throws {
        try fake.control("fault", #"{"mode":"status","status":429,"count":1,"path":"/v1/air-quality"}"#)
        let outcomes = openMeteo().fetch(places(150), logger: logger)
        XCTAssertEqual(try airQualityRequests().count, 1)
        guard case .failure(let first) = outcomes[0], case .failure(let later) = outcomes[120] else {
            return XCTFail("every place fails")
        }
        XCTAssertEqual(
            first.message,
            "open-meteo-air-quality: HTTP 429: Minutely API request limit exceeded. Please try again in one minute.")
        XCTAssertEqual(first.cause, .quota(.minute))
        XCTAssertFalse(later.wasAsked)
        XCTAssertEqual(telemetry.callCount(provider: .openMeteo), 1, "an error answer is one call")
    }

    func testServerErrorsAndBrokenAnswersFailEveryPlaceOfTheBatch() throws {
        for fault in [#"{"mode":"status","status":503}"#, #"{"mode":"malformed_json"}"#, #"{"mode":"wrong_count"}"#] {
            try fake.control("fault", fault)
            let outcomes = openMeteo().fetch(places(3), logger: logger)
            XCTAssertEqual(outcomes.count, 3)
            for outcome in outcomes { XCTAssertNotNil(outcome.failureMessage, fault) }
        }
        try fake.control("fault", #"{"mode":"bad_entry","place":1}"#)
        let outcomes = openMeteo().fetch(places(3), logger: logger)
        XCTAssertNil(outcomes[0].failureMessage)
        XCTAssertEqual(outcomes[1].failureMessage?.hasPrefix("open-meteo-air-quality: bad entry:"), true)
        XCTAssertNil(outcomes[2].failureMessage)
    }

    func testOpenWeatherMapAsksEachPlaceWithTheKeyAndNeverShowsIt() throws {
        let key = "test-owm-key"
        let source = OpenWeatherMapAirPollution(upstream, key: Secret(key), callsCountedAs: .openWeatherMap)
        let outcomes = source.fetch(places(5), logger: logger)
        for outcome in outcomes {
            XCTAssertEqual(try outcome.get().concentrations[.pm10] ?? .nan, 14.2e-6, accuracy: 1e-15)
        }
        let requests = try fake.requests().filter { $0["path"] as? String == "/data/2.5/air_pollution" }
        XCTAssertEqual(requests.count, 5)
        XCTAssertEqual(Set(requests.compactMap { ($0["query"] as? [String: String])?["lon"] }).count, 5)
        XCTAssertEqual(telemetry.callCount(provider: .openWeatherMap), 5, "on the key's quota")

        let wrong = OpenWeatherMapAirPollution(upstream, key: Secret("wrong-key-123"), callsCountedAs: .openWeatherMap)
        let refused = wrong.fetch(places(1), logger: logger)[0]
        XCTAssertEqual(refused.failureMessage, "openweathermap-air-pollution: invalid API key (HTTP 401)")
        try fake.control(
            "fault", #"{"mode":"status","status":500,"body":{"cod":500,"message":"key wrong-key-123 broke"}}"#)
        let echoed = wrong.fetch(places(1), logger: logger)[0].failureMessage
        XCTAssertEqual(echoed, "openweathermap-air-pollution: HTTP 500: key <redacted> broke")
    }
}
