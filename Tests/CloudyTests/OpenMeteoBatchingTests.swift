import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// Open-Meteo's batching through the real libcurl client against a server on 127.0.0.1:
/// several requests per refresh, one at a time, each answer paired with its own places although
/// answers are decoded while the next request runs, and a 429 stopping the rest of the refresh.
final class OpenMeteoBatchingTests: XCTestCase {
    let places = [
        Place(name: "Berlin", latitude: 52.52, longitude: 13.41),
        Place(name: "London", latitude: 51.5085, longitude: -0.1257),
        Place(name: "Paris", latitude: 48.8534, longitude: 2.3488),
        Place(name: "Rome", latitude: 41.8919, longitude: 12.5113),
    ]

    /// Answers each request by the first latitude in its query; records the latitudes asked for.
    func serve(_ answer: @escaping @Sendable (String) -> ScriptedHTTPServer.Answer) throws -> (
        ScriptedHTTPServer, NIOLockedValueBox<[String]>
    ) {
        let asked = NIOLockedValueBox<[String]>([])
        let server = try ScriptedHTTPServer { head in
            let query = URLComponents(string: head.uri)?.queryItems ?? []
            let latitude = query.first { $0.name == "latitude" }?.value ?? ""
            asked.withLockedValue { $0.append(latitude) }
            return answer(latitude)
        }
        addTeardownBlock { server.stop() }
        return (server, asked)
    }

    func provider(_ server: ScriptedHTTPServer, telemetry: ExporterTelemetry) -> OpenMeteoProvider {
        OpenMeteoProvider(
            Upstream(
                baseURL: server.baseURL, timeout: 5, client: CurlHTTPClient(userAgent: "cloudy-test/1.0"),
                recorder: telemetry),
            forecast: ForecastSettings(days: 7, hours: 24), placesPerRequest: 1)
    }

    func testEachBatchKeepsItsOwnPlacesWhileDecodingOverlapsTheNextRequest() throws {
        let body = try TestPaths.fixtureBytes("open-meteo-forecast.json")
        let (server, asked) = try serve { latitude in
            latitude == "51.5085"
                ? .respond(
                    status: .internalServerError, headers: [], body: Array("{\"error\":true,\"reason\":\"boom\"}".utf8))
                : .respond(status: .ok, headers: [("Content-Type", "application/json")], body: body)
        }
        let telemetry = ExporterTelemetry(startedAt: 0)
        let log = RecordedLog()
        let outcomes = provider(server, telemetry: telemetry).fetch(places, logger: log.logger)

        XCTAssertEqual(
            asked.withLockedValue { $0 }, ["52.52", "51.5085", "48.8534", "41.8919"], "one request per batch, in order")
        XCTAssertEqual(outcomes.count, 4)
        XCTAssertNotNil(try? outcomes[0].get())
        XCTAssertThrowsError(try outcomes[1].get()) { XCTAssertTrue("\($0)".contains("HTTP 500: boom"), "\($0)") }
        XCTAssertEqual(try outcomes[2].get().current.temperatureCelsius, 24.5)
        XCTAssertEqual(try outcomes[3].get().current.temperatureCelsius, 24.5)
        XCTAssertEqual(telemetry.upstreamCount(provider: .openMeteo, code: "200"), 3)
        XCTAssertEqual(telemetry.upstreamCount(provider: .openMeteo, code: "500"), 1)
        // Each request and its answer in the debug log, in order (bench/refresh's timeline).
        let exchanges = log.all.filter { $0.message.hasPrefix("open-meteo ") }
        XCTAssertEqual(exchanges.map(\.level), Array(repeating: .debug, count: 8))
        XCTAssertEqual(
            exchanges.map { "\($0.message): \($0.metadata["answer"] ?? "")" },
            [
                "open-meteo request: ", "open-meteo answer: 200, \(body.count) bytes",
                "open-meteo request: ", "open-meteo answer: 500, 30 bytes",
                "open-meteo request: ", "open-meteo answer: 200, \(body.count) bytes",
                "open-meteo request: ", "open-meteo answer: 200, \(body.count) bytes",
            ])
        XCTAssertEqual(Set(exchanges.map { "\($0.metadata["places"] ?? "")" }), ["1"], "one place per batch here")
        // No answer at all: why, as the `code` label of cloudy_exporter_upstream_requests_total has it.
        XCTAssertEqual(OpenMeteoBatches.summary(.failure(HTTPClientError(.timeout, "after 5 s"))), "timeout")
        XCTAssertEqual(OpenMeteoBatches.summary(.failure(HTTPClientError(.tooLarge, "64 MB"))), "too_large")
    }

    func testA429StopsTheRestOfTheRefresh() throws {
        let body = try TestPaths.fixtureBytes("open-meteo-forecast.json")
        let (server, asked) = try serve { latitude in
            latitude == "51.5085"
                ? .respond(status: .tooManyRequests, headers: [("Retry-After", "30")], body: [])
                : .respond(status: .ok, headers: [], body: body)
        }
        let outcomes = provider(server, telemetry: ExporterTelemetry(startedAt: 0)).fetch(
            places, logger: .init(label: "test"))

        XCTAssertEqual(asked.withLockedValue { $0 }, ["52.52", "51.5085"], "nothing asked after the 429")
        XCTAssertNotNil(try? outcomes[0].get())
        for index in 1...3 {
            guard case .failure(let error) = outcomes[index] else {
                return XCTFail("place \(index) should have failed")
            }
            XCTAssertTrue(error.isRateLimit)
            XCTAssertEqual(error.retryAfter, 30)
        }
        guard case .failure(let skipped) = outcomes[3] else { return }
        XCTAssertTrue(skipped.message.contains("not asked"), skipped.message)
    }

    /// An answer in another zone than the place's `timezone:` asked for (a mirror that drops the
    /// parameter; the fixture is Berlin's, UTC+2) is said once while it lasts, and again after it
    /// came right; another name of the same zone is no other zone.
    func testAnAnswerInAnotherZoneThanAskedIsSaidOnce() throws {
        let body = try TestPaths.fixtureBytes("open-meteo-forecast.json")
        let (server, _) = try serve { _ in
            .respond(status: .ok, headers: [("Content-Type", "application/json")], body: body)
        }
        let log = RecordedLog()
        let provider = provider(server, telemetry: ExporterTelemetry(startedAt: 0))
        let message = "open-meteo answered in another zone than the place's timezone"
        var angeles = Place(
            name: "Asked in LA time", latitude: 52.52, longitude: 13.41, timezone: "America/Los_Angeles")
        let berlin = Place(name: "Berlin", latitude: 52.52, longitude: 13.41, timezone: "Europe/Berlin")
        let rome = Place(name: "Rome", latitude: 41.8919, longitude: 12.5113, timezone: "Europe/Rome")  // UTC+2 too
        _ = provider.fetch([angeles, berlin, rome], logger: log.logger)
        _ = provider.fetch([angeles], logger: log.logger)
        let said = log.entries(containing: message)
        XCTAssertEqual(said.map { "\($0.metadata["location"] ?? "")" }, ["Asked in LA time"])
        XCTAssertEqual(said.first?.metadata["timezone"], "America/Los_Angeles")
        XCTAssertEqual(said.first?.metadata["utc_offset_seconds"], "-25200")
        XCTAssertEqual(said.first?.metadata["answer_timezone"], "Europe/Berlin")
        XCTAssertEqual(said.first?.metadata["answer_utc_offset_seconds"], "7200")

        angeles.timezone = "Europe/Berlin"
        _ = provider.fetch([angeles], logger: log.logger)
        angeles.timezone = "America/Los_Angeles"
        _ = provider.fetch([angeles], logger: log.logger)
        XCTAssertEqual(log.entries(containing: message).count, 2, "said again after it came right")
    }
}
