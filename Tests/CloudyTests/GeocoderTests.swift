import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest
@testable import Cloudy

/// `city:` places against a scripted geocoding server on 127.0.0.1, through libcurl.
final class GeocoderTests: XCTestCase {
    var server: ScriptedHTTPServer!
    let answers = NIOLockedValueBox<[String]>([])
    let failing = NIOLockedValueBox(false)
    var storage: URL!

    override func setUpWithError() throws {
        let fixture = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        let empty = try TestPaths.fixtureBytes("open-meteo-geocoding-empty.json")
        let answers = self.answers, failing = self.failing
        server = try ScriptedHTTPServer { head in
            answers.withLockedValue { $0.append(head.uri) }
            if failing.withLockedValue({ $0 }) { return .respond(status: .serviceUnavailable, headers: [], body: []) }
            let found = head.uri.contains("name=Springfield")
            return .respond(status: .ok, headers: [("Content-Type", "application/json")], body: found ? fixture : empty)
        }
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-geo-\(UUID().uuidString)")
    }

    override func tearDown() {
        server.stop()
        try? FileManager.default.removeItem(at: storage)
    }

    func geocoder() -> Geocoder {
        Geocoder(baseURL: server.baseURL, storagePath: storage.path, client: CurlHTTPClient(userAgent: "test"),
                 recorder: ExporterTelemetry(startedAt: 0), logger: Logger(label: "test"))
    }

    func testFirstMatchNarrowedByRegionThenRememberedAcrossRestarts() throws {
        let place = Place(name: "Springfield", city: CitySearch(query: "Springfield, Illinois", country: "US"))
        let located = try XCTUnwrap(geocoder().locate([place], now: 0, retryInterval: 600).first).get()
        XCTAssertTrue(located.isLocated)
        XCTAssertEqual(located.latitude, 39.80172, "the Illinois match, not the first (Missouri) one")
        XCTAssertEqual(located.longitude, -89.64371)
        XCTAssertEqual(located.timezone, "America/Chicago")
        let request = try XCTUnwrap(answers.withLockedValue { $0.first })
        XCTAssertTrue(request.hasPrefix("/v1/search?name=Springfield%2C%20Illinois&count=10&language=en&format=json&countryCode=US"), request)
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.appendingPathComponent("places.json").path))

        failing.withLockedValue { $0 = true }
        let again = try XCTUnwrap(geocoder().locate([place], now: 0, retryInterval: 600).first).get()
        XCTAssertEqual(again.latitude, 39.80172, "a new process finds it in the state file")
        XCTAssertEqual(answers.withLockedValue { $0.count }, 1, "without asking the geocoder")

        var moved = place
        moved.city = CitySearch(query: "Springfield", country: "US")
        failing.withLockedValue { $0 = false }
        let first = try XCTUnwrap(geocoder().locate([moved], now: 0, retryInterval: 600).first).get()
        XCTAssertEqual(first.latitude, 37.21533, "a changed query is looked up again; no region: the first match")
    }

    func testNoMatchAndOutagesMakeOnlyThatPlaceWait() throws {
        let nowhere = Place(name: "Nowhere", city: CitySearch(query: "Atlantis"))
        let fixed = Place(name: "Brussels", latitude: 50.85, longitude: 4.35)
        let geocoder = geocoder()
        let results = geocoder.locate([nowhere, fixed], now: 1000, retryInterval: 60)
        XCTAssertThrowsError(try results[0].get()) { error in
            XCTAssertEqual("\(error)", "geocoding Atlantis: no place matches")
        }
        XCTAssertEqual(try results[1].get(), fixed, "places with coordinates never wait")

        let springfield = Place(name: "Springfield", city: CitySearch(query: "Springfield"))
        failing.withLockedValue { $0 = true }
        XCTAssertThrowsError(try geocoder.locate([springfield], now: 1000, retryInterval: 60)[0].get())
        let asked = answers.withLockedValue { $0.count }
        failing.withLockedValue { $0 = false }
        XCTAssertThrowsError(try geocoder.locate([springfield], now: 1010, retryInterval: 60)[0].get()) { error in
            XCTAssertTrue("\(error)".hasSuffix("retrying later"), "\(error)")
        }
        XCTAssertEqual(answers.withLockedValue { $0.count }, asked, "no request during the back-off")
        XCTAssertNoThrow(try geocoder.locate([springfield], now: 1100, retryInterval: 60)[0].get(), "asked again after it")
    }
}
