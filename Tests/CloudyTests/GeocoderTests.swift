import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import XCTest

@testable import Cloudy

/// `city:` places against a scripted geocoding server on 127.0.0.1, through libcurl, with time
/// on a `ManualClock` and the retry jitter pinned, so retries are tested without waiting.
final class GeocoderTests: XCTestCase {
    var server: ScriptedHTTPServer!
    let answers = NIOLockedValueBox<[String]>([])
    /// When set, every look-up gets this status and these headers.
    let failing = NIOLockedValueBox<(status: HTTPResponseStatus, headers: [(String, String)])?>(nil)
    /// When set, every look-up that does not fail gets this body.
    let scripted = NIOLockedValueBox<String?>(nil)
    let clock = ManualClock()
    let log = RecordedLog()
    var storage: URL!

    override func setUpWithError() throws {
        let fixture = try TestPaths.fixtureBytes("open-meteo-geocoding.json")
        let empty = try TestPaths.fixtureBytes("open-meteo-geocoding-empty.json")
        let answers = self.answers
        let failing = self.failing
        let scripted = self.scripted
        server = try ScriptedHTTPServer { head in
            answers.withLockedValue { $0.append(head.uri) }
            if let failure = failing.withLockedValue({ $0 }) {
                return .respond(status: failure.status, headers: failure.headers, body: [])
            }
            let found = head.uri.contains("name=Springfield")
            let body = scripted.withLockedValue { $0 }.map { Array($0.utf8) } ?? (found ? fixture : empty)
            return .respond(status: .ok, headers: [("Content-Type", "application/json")], body: body)
        }
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-geo-\(UUID().uuidString)")
    }

    override func tearDown() {
        server.stop()
        try? FileManager.default.removeItem(at: storage)
    }

    func geocoder(jitter: Double = 0.5) -> Geocoder {
        Geocoder(
            baseURL: server.baseURL, storagePath: storage.path, client: CurlHTTPClient(userAgent: "test"),
            recorder: ExporterTelemetry(startedAt: 0), logger: log.logger, clock: clock, jitter: { jitter })
    }

    var lookUps: Int { answers.withLockedValue { $0.count } }

    func fail(_ status: HTTPResponseStatus, retryAfter: String? = nil) {
        failing.withLockedValue { $0 = (status, retryAfter.map { [("Retry-After", $0)] } ?? []) }
    }

    /// Looks `place` up at the clock's now with a 60 s retry interval.
    func locate(_ geocoder: Geocoder, _ place: Place) -> Result<Place, WeatherFetchError> {
        geocoder.locateWaiting([place], now: clock.now(), retryInterval: 60)[0]
    }

    func testFirstMatchNarrowedByRegionThenRememberedAcrossRestarts() throws {
        let place = Place(name: "Springfield", city: CitySearch(query: "Springfield, Illinois", country: "US"))
        let located = try locate(geocoder(), place).get()
        XCTAssertTrue(located.isLocated)
        XCTAssertEqual(located.latitude, 39.80172, "the Illinois match, not the first (Missouri) one")
        XCTAssertEqual(located.longitude, -89.64371)
        XCTAssertEqual(located.timezone, "America/Chicago")
        let request = try XCTUnwrap(answers.withLockedValue { $0.first })
        XCTAssertTrue(
            request.hasPrefix(
                "/v1/search?name=Springfield%2C%20Illinois&count=10&language=en&format=json&countryCode=US"), request)
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.appendingPathComponent("places.json").path))
        let resolved = try XCTUnwrap(log.entries(containing: "city resolved").first)
        XCTAssertEqual(resolved.metadata["chosen"], "Springfield, Illinois, United States")

        fail(.serviceUnavailable)
        let again = try locate(geocoder(), place).get()
        XCTAssertEqual(again.latitude, 39.80172, "a new process finds it in the state file")
        XCTAssertEqual(lookUps, 1, "without asking the geocoder")

        var moved = place
        moved.city = CitySearch(query: "Springfield", country: "US")
        failing.withLockedValue { $0 = nil }
        let first = try locate(geocoder(), moved).get()
        XCTAssertEqual(first.latitude, 37.21533, "a changed query is looked up again; no region: the first match")
    }

    func testAZoneNoMachineKnowsIsLeftOutAndAStateFileIsCheckedToo() throws {
        // The zone goes into every forecast request for the place: one the API cannot read
        // (here with a line break) would fail them all, and the place's whole batch.
        scripted.withLockedValue {
            $0 = #"{"results":[{"name":"Evilton","latitude":50.1,"longitude":8.6,"timezone":"Europe/Berlin\n"}]}"#
        }
        let evil = Place(name: "Evil", city: CitySearch(query: "Evilton"))
        let located = try locate(geocoder(), evil).get()
        XCTAssertEqual(located.latitude, 50.1)
        XCTAssertNil(located.timezone, "left to the forecast API (timezone=auto)")
        let resolved = try XCTUnwrap(log.entries(containing: "city resolved").first)
        XCTAssertEqual(resolved.metadata["ignored_timezone"], "Europe/Berlin\n")
        XCTAssertEqual(resolved.metadata["timezone"], "")

        // A state file from before this rule, or edited by hand.
        func remembered(_ name: String, _ query: String, latitude: Double, zone: String) -> String {
            #""\#(name)": {"search": {"query": "\#(query)"}, "latitude": \#(latitude), "longitude": 8.6, "#
                + #""timezone": "\#(zone)", "label": "\#(query)"}"#
        }
        let file =
            "{" + remembered("Evil", "Evilton", latitude: 50.1, zone: "Not/AZone") + ", "
            + remembered("Far", "Farville", latitude: 1000, zone: "Europe/Berlin") + "}"
        try Data(file.utf8).write(to: storage.appendingPathComponent("places.json"))
        let before = lookUps
        let fresh = geocoder()
        let kept = try locate(fresh, evil).get()
        XCTAssertEqual(kept.latitude, 50.1)
        XCTAssertNil(kept.timezone, "a remembered zone no machine knows is left out too")
        XCTAssertEqual(lookUps, before, "the rest of the remembered place is used")
        _ = try locate(fresh, Place(name: "Far", city: CitySearch(query: "Farville"))).get()
        XCTAssertEqual(lookUps, before + 1, "remembered coordinates off the globe are looked up again")
        XCTAssertEqual(log.entries(containing: "lie off the globe").first?.metadata["places"], "Far", "and said")
    }

    func testNoMatchMakesOnlyThatPlaceWait() throws {
        let nowhere = Place(name: "Nowhere", city: CitySearch(query: "Atlantis"))
        let fixed = Place(name: "Brussels", latitude: 50.85, longitude: 4.35)
        let results = geocoder().locateWaiting([nowhere, fixed], now: clock.now(), retryInterval: 60)
        XCTAssertThrowsError(try results[0].get()) { error in
            XCTAssertEqual("\(error)", "geocoding Atlantis: no place matches")
        }
        XCTAssertEqual(try results[1].get(), fixed, "places with coordinates never wait")
        XCTAssertEqual(log.entries(containing: "city look-up failed").first?.metadata["reason"], "no place matches")
    }

    /// Moves the clock on and checks that `place` waits `seconds` from now: no look-up a second
    /// before, one at `seconds`. Returns that look-up's outcome.
    func lookUpAfterWaiting(
        _ seconds: Double, _ geocoder: Geocoder, _ place: Place,
        file: StaticString = #filePath, line: UInt = #line
    ) -> Result<Place, WeatherFetchError> {
        let asked = lookUps
        clock.advance(by: seconds - 1)
        XCTAssertThrowsError(try locate(geocoder, place).get(), file: file, line: line) { error in
            XCTAssertTrue(
                "\(error)".hasPrefix("geocoding \(place.city?.description ?? "")"), "\(error)", file: file, line: line)
        }
        XCTAssertEqual(lookUps, asked, "no look-up before \(seconds) s", file: file, line: line)
        clock.advance(by: 1)
        let outcome = locate(geocoder, place)
        XCTAssertEqual(lookUps, asked + 1, "a look-up at \(seconds) s", file: file, line: line)
        return outcome
    }

    let springfield = Place(name: "Springfield", city: CitySearch(query: "Springfield"))

    func testAFailedLookUpWaitsOutItsBackOffThenRetriesAndPersists() throws {
        // Jitter pinned at its top: the first wait is 1.2 × the 60 s interval.
        let geocoder = geocoder(jitter: 1)
        fail(.serviceUnavailable)
        XCTAssertThrowsError(try locate(geocoder, springfield).get()) { error in
            XCTAssertEqual("\(error)", "geocoding Springfield: HTTP 503")
        }
        XCTAssertEqual(log.entries(containing: "city look-up failed").first?.metadata["reason"], "HTTP 503")
        failing.withLockedValue { $0 = nil }
        XCTAssertFalse(FileManager.default.fileExists(atPath: storage.appendingPathComponent("places.json").path))
        XCTAssertEqual(try lookUpAfterWaiting(72, geocoder, springfield).get().latitude, 37.21533)
        let saved = try Data(contentsOf: storage.appendingPathComponent("places.json"))
        let remembered = try XCTUnwrap(try JSONSerialization.jsonObject(with: saved) as? [String: [String: Any]])
        XCTAssertEqual(remembered["Springfield"]?["latitude"] as? Double, 37.21533, "persisted in places.json")
    }

    func testTheBackOffDoublesWithEachFailureInARow() throws {
        let geocoder = geocoder(jitter: 0.5)  // the plain interval: 60 s, then 120 s
        fail(.badGateway)
        XCTAssertThrowsError(try locate(geocoder, springfield).get())
        XCTAssertThrowsError(try lookUpAfterWaiting(60, geocoder, springfield).get())
        failing.withLockedValue { $0 = nil }
        XCTAssertNoThrow(try lookUpAfterWaiting(120, geocoder, springfield).get())
    }

    func testRetryAfterIsRespectedInBothForms() throws {
        let geocoder = geocoder(jitter: 0.5)
        fail(.tooManyRequests, retryAfter: "300")
        XCTAssertThrowsError(try locate(geocoder, springfield).get())
        // An HTTP date is read against the `now` the look-up is given, not the wall clock.
        fail(.serviceUnavailable, retryAfter: HTTPDate.format(Date(timeIntervalSince1970: clock.now() + 300 + 500)))
        XCTAssertThrowsError(try lookUpAfterWaiting(300, geocoder, springfield).get(), "longer than the back-off")
        failing.withLockedValue { $0 = nil }
        XCTAssertNoThrow(try lookUpAfterWaiting(500, geocoder, springfield).get())
    }

    /// A 429 (or a `Retry-After`) is the geocoder's limit for this client: no other place's
    /// look-up goes to it either until the wait is over.
    func testARateLimitHoldsEveryPlacesLookUpBack() throws {
        let geocoder = geocoder(jitter: 0.5)
        fail(.tooManyRequests, retryAfter: "300")
        XCTAssertThrowsError(try locate(geocoder, springfield).get())
        failing.withLockedValue { $0 = nil }
        let other = Place(name: "Other", city: CitySearch(query: "Springfield, Illinois"))
        XCTAssertThrowsError(try locate(geocoder, other).get()) {
            XCTAssertTrue("\($0)".hasSuffix("not asked: the geocoder asked to wait (HTTP 429)"), "\($0)")
        }
        XCTAssertEqual(lookUps, 1, "not sent while the geocoder holds every look-up back")
        clock.advance(by: 300)
        XCTAssertEqual(try locate(geocoder, other).get().latitude, 39.80172)
        XCTAssertEqual(lookUps, 2)
    }

    /// A reload that fixes a `city:` asks at once: the failed search's back-off was for it alone.
    func testAFixedSearchDoesNotWaitForTheFailedOnesBackOff() throws {
        let geocoder = geocoder(jitter: 0.5)
        let typo = Place(name: "Springfield", city: CitySearch(query: "Sprngfield"))
        XCTAssertThrowsError(try locate(geocoder, typo).get())
        clock.advance(by: 10)
        XCTAssertThrowsError(try locate(geocoder, typo).get()) {
            XCTAssertEqual("\($0)", "geocoding Sprngfield: no place matches")
        }
        XCTAssertEqual(lookUps, 1)
        XCTAssertEqual(try locate(geocoder, springfield).get().latitude, 37.21533, "asked at once")
        XCTAssertEqual(lookUps, 2)
    }

    /// A state file that exists but cannot be read (here a directory) is said in the log, with
    /// the system's reason.
    func testAnUnreadableStateFileIsLogged() throws {
        try FileManager.default.createDirectory(
            at: storage.appendingPathComponent("places.json"), withIntermediateDirectories: true)
        _ = geocoder()
        let warned = log.entries(containing: "cannot read the state file")
        XCTAssertEqual(warned.count, 1)
        XCTAssertEqual(warned.first?.metadata["reason"], "Is a directory")
        XCTAssertNil(warned.first?.metadata["set_aside_as"], "a directory is left where it is")
    }

    /// One entry that does not decode costs that place alone its look-up; a file that does not
    /// decode as a whole is set aside, not overwritten by the look-ups that follow.
    func testAStateFileThatDoesNotDecodeLosesOnlyWhatItMust() throws {
        let file = storage.appendingPathComponent("places.json")
        let entries = """
            {"Springfield": {"search": {"query": "Springfield"}, "latitude": 37.2, "longitude": -93.3,
            "label": "Springfield, Missouri"}, "Atlantis": {"search": {"query": "Atlantis"}, "latitude": "north"}}
            """
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        try Data(entries.utf8).write(to: file)
        let kept = Geocoder.read(file, logger: log.logger)
        XCTAssertEqual(Array(kept.keys), ["Springfield"])
        XCTAssertEqual(
            log.entries(containing: "entries that do not decode").first?.metadata["places"], "Atlantis")

        try Data("{\"Springfield\": ".utf8).write(to: file)
        XCTAssertEqual(Geocoder.read(file, logger: log.logger), [:])
        let warned = try XCTUnwrap(log.entries(containing: "cannot read the state file").first)
        XCTAssertEqual(warned.metadata["set_aside_as"], "\(file.path).unreadable")
        XCTAssertEqual(try Data(contentsOf: file.appendingPathExtension("unreadable")), Data("{\"Springfield\": ".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
    }
}

extension Geocoder {
    /// `locate` as a feed sees it once the look-ups it began are over: each place located or
    /// failed, none under way.
    func locateWaiting(_ places: [Place], now: Double, retryInterval: Double) -> [Result<Place, WeatherFetchError>] {
        let caller = ObjectIdentifier(self)
        let first = locate(places, now: now, retryInterval: retryInterval, caller: caller) { _ in }
        guard first.contains(where: { $0 == nil }) else { return first.compactMap { $0 } }
        waitForLookUps()
        return locate(places, now: now, retryInterval: retryInterval, caller: caller) { _ in }.map {
            $0 ?? .failure(WeatherFetchError("still being looked up"))
        }
    }
}
