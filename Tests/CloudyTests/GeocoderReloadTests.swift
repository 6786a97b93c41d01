import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// A reload tells the geocoder what is configured now (`Geocoder.update`): look-ups for places
/// gone are dropped and their late answers not kept, and another `geocoding.url` is another
/// geocoder, asked at once. Against scripted geocoders on 127.0.0.1 whose answers a gate holds
/// back, with time on a `ManualClock`.
final class GeocoderReloadTests: XCTestCase {
    let clock = ManualClock()
    let log = RecordedLog()
    let storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-georeload-\(UUID())")
    var servers: [ScriptedHTTPServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        try? FileManager.default.removeItem(at: storage)
    }

    /// A geocoder that answers every search with the fixture (Springfield, Missouri first), or
    /// with `latitude` in its first result, once `gate` (if any) opens; it counts by name.
    func geocodingServer(
        gate: ScriptedHTTPServer.ReleaseGate? = nil, latitude: Double? = nil, status: HTTPResponseStatus = .ok
    ) throws -> (server: ScriptedHTTPServer, searches: NIOLockedValueBox<[String]>) {
        var body = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        if let latitude {
            body = Array(
                String(decoding: body, as: UTF8.self).replacingOccurrences(of: "37.21533", with: "\(latitude)").utf8)
        }
        let searches = NIOLockedValueBox<[String]>([])
        let answer = ScriptedHTTPServer.Answer.respond(status: status, headers: [], body: status == .ok ? body : [])
        let server = try ScriptedHTTPServer { head in
            let name = head.uri.split(separator: "=")[1].split(separator: "&")[0]
            searches.withLockedValue { $0.append(String(name)) }
            return gate.map { .held($0, then: answer) } ?? answer
        }
        servers.append(server)
        return (server, searches)
    }

    func geocoder(_ url: String) -> Geocoder {
        Geocoder(
            baseURL: url, storagePath: storage.path, client: CurlHTTPClient(userAgent: "cloudy-tests"),
            recorder: ExporterTelemetry(startedAt: 0), logger: log.logger, clock: clock, jitter: { 0.5 })
    }

    func town(_ index: Int) -> Place { Place(name: "Town\(index)", city: CitySearch(query: "Town\(index)")) }

    func testLookUpsForPlacesAReloadRemovedAreDroppedAndTheirAnswersNotKept() throws {
        let gate = ScriptedHTTPServer.ReleaseGate()
        let old = try geocodingServer(gate: gate)
        let geocoder = geocoder(old.server.baseURL)
        let towns = (0..<6).map(town)
        geocoder.update(url: old.server.baseURL, timeout: 10, places: towns)
        XCTAssertEqual(
            geocoder.locate(towns, now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { _ in }
                .compactMap { $0 }.count, 0)
        let deadline = Date().addingTimeInterval(10)
        while old.searches.withLockedValue({ $0.count }) < Geocoder.lanes, Date() < deadline { usleep(1000) }
        // The reload keeps Town0 and adds Paris: Town4 and Town5, still queued, are never asked.
        let paris = Place(name: "Paris", city: CitySearch(query: "Paris"))
        geocoder.update(url: old.server.baseURL, timeout: 10, places: [towns[0], paris])
        _ = geocoder.locate([paris], now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { _ in }
        gate.open()
        geocoder.waitForLookUps()
        XCTAssertEqual(Set(old.searches.withLockedValue { $0 }), ["Town0", "Town1", "Town2", "Town3", "Paris"])
        let kept = Geocoder.read(storage.appendingPathComponent("places.json"), logger: log.logger)
        XCTAssertEqual(Set(kept.keys), ["Town0", "Paris"], "what was found for Town1 to Town3 is not kept")
        XCTAssertEqual(
            Set(log.entries(containing: "city resolved").compactMap { $0.metadata["city"].map { "\($0)" } }),
            ["Town0", "Paris"],
            "only the choices kept are logged as the places' choices")
    }

    func testAnotherURLIsAskedAtOnceAndWhatTheOldOneSaysLaterIsNotKept() throws {
        let gate = ScriptedHTTPServer.ReleaseGate()
        let old = try geocodingServer(gate: gate)
        let new = try geocodingServer(latitude: 40.5)
        let place = town(0)
        let geocoder = geocoder(old.server.baseURL)
        geocoder.update(url: old.server.baseURL, timeout: 10, places: [place])
        XCTAssertNil(
            geocoder.locate([place], now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { _ in }[0])
        let deadline = Date().addingTimeInterval(10)
        while old.searches.withLockedValue({ $0.count }) < 1, Date() < deadline { usleep(1000) }
        geocoder.update(url: new.server.baseURL, timeout: 10, places: [place])
        while new.searches.withLockedValue({ $0.count }) < 1, Date() < deadline { usleep(1000) }
        XCTAssertEqual(new.searches.withLockedValue { $0 }, ["Town0"], "asked at once, the old look-up still hanging")
        gate.open()
        XCTAssertEqual(try geocoder.locateWaiting([place], now: clock.now(), retryInterval: 60)[0].get().latitude, 40.5)
    }

    func testFailuresAtTheOldURLHoldNoPlaceBackAtTheNewOne() throws {
        let old = try geocodingServer(status: .serviceUnavailable)
        let new = try geocodingServer()
        let place = town(0)
        let geocoder = geocoder(old.server.baseURL)
        geocoder.update(url: old.server.baseURL, timeout: 10, places: [place])
        XCTAssertThrowsError(try geocoder.locateWaiting([place], now: clock.now(), retryInterval: 60)[0].get())
        geocoder.update(url: new.server.baseURL, timeout: 10, places: [place])
        XCTAssertEqual(
            try geocoder.locateWaiting([place], now: clock.now(), retryInterval: 60)[0].get().latitude, 37.21533,
            "no 30 s back-off for the old geocoder's 503")
    }

    /// The places the old geocoder did not find are asked of the new one by the reload itself,
    /// and the feeds that asked for them are told, rather than waiting for their next refresh.
    func testAReloadToAnotherURLAsksItAtOnceForThePlacesNotFound() throws {
        let old = try geocodingServer(status: .serviceUnavailable)
        let new = try geocodingServer()
        let place = town(0)
        let geocoder = geocoder(old.server.baseURL)
        geocoder.update(url: old.server.baseURL, timeout: 10, places: [place])
        let told = NIOLockedValueBox<[String]>([])
        _ = geocoder.locate([place], now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { name in
            told.withLockedValue { $0.append(name) }
        }
        geocoder.waitForLookUps()
        XCTAssertEqual(told.withLockedValue { $0 }, ["Town0"], "the old geocoder's 503")
        geocoder.update(url: new.server.baseURL, timeout: 10, places: [place])
        geocoder.waitForLookUps()
        XCTAssertEqual(new.searches.withLockedValue { $0 }, ["Town0"], "asked with no feed asking")
        XCTAssertEqual(told.withLockedValue { $0 }, ["Town0", "Town0"], "and the feed that asked is told")
        let located = geocoder.locate([place], now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) {
            _ in
        }
        XCTAssertEqual(try located[0]?.get().latitude, 37.21533)
    }

    /// Look-ups hung at a geocoder a reload replaced give their lanes up at once, so the places
    /// are asked of the new one without waiting out `refresh.timeout` (here 60 s) behind them.
    func testLookUpsHungAtTheOldURLGiveTheirLanesUpAtOnce() throws {
        let gate = ScriptedHTTPServer.ReleaseGate()
        defer { gate.open() }
        let old = try geocodingServer(gate: gate)
        let new = try geocodingServer()
        let towns = (0...Geocoder.lanes).map(town)
        let geocoder = geocoder(old.server.baseURL)
        geocoder.update(url: old.server.baseURL, timeout: 60, places: towns)
        _ = geocoder.locate(towns, now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { _ in }
        let deadline = Date().addingTimeInterval(20)
        while old.searches.withLockedValue({ $0.count }) < Geocoder.lanes, Date() < deadline { usleep(1000) }
        XCTAssertEqual(old.searches.withLockedValue { $0.count }, Geocoder.lanes, "every lane hangs; one place waits")
        geocoder.update(url: new.server.baseURL, timeout: 60, places: towns)
        while new.searches.withLockedValue({ $0.count }) < towns.count, Date() < deadline { usleep(1000) }
        XCTAssertEqual(
            Set(new.searches.withLockedValue { $0 }), Set(towns.map(\.name)), "all asked there, long before 60 s")
        geocoder.waitForLookUps()
        XCTAssertEqual(
            try geocoder.locate(towns, now: clock.now(), retryInterval: 60, caller: ObjectIdentifier(self)) { _ in }
                .map { try $0?.get().latitude }, Array(repeating: 37.21533, count: towns.count))
    }
}
