import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// `refresh.parallel_requests`: against a host that is not a free public one, several batch
/// requests are in flight at once; the public hosts get one at a time. Through the real
/// libcurl client against a scripted Open-Meteo that holds its answers until the requests it
/// expects together have all arrived, so nothing is timed: requests sent one after another
/// would hold the first forever (and fail at the timeout).
final class ParallelBatchesTests: XCTestCase {
    var rig: RefresherRig!

    override func setUpWithError() throws {
        rig = try RefresherRig()
    }

    override func tearDown() {
        rig.stop()
    }

    /// Answers every request with its places' forecasts, held until `together` requests are
    /// waiting (or the last of `total` came); returns the most that waited at once.
    func holdAnswers(together: Int, total: Int) -> NIOLockedValueBox<Int> {
        let entry = rig.entry
        let most = NIOLockedValueBox(0)
        let waves = NIOLockedValueBox((gate: ScriptedHTTPServer.ReleaseGate(), waiting: 0, received: 0))
        rig.answer { head in
            let count = RefresherRig.placeCount(head.uri)
            let body = "[" + Array(repeating: entry, count: count).joined(separator: ",") + "]"
            let answer = ScriptedHTTPServer.Answer.respond(status: .ok, headers: [], body: Array(body.utf8))
            let (gate, full) = waves.withLockedValue { waves in
                waves.waiting += 1
                waves.received += 1
                let gate = waves.gate
                most.withLockedValue { $0 = max($0, waves.waiting) }
                guard waves.waiting == together || waves.received == total else { return (gate, false) }
                waves = (ScriptedHTTPServer.ReleaseGate(), 0, waves.received)
                return (gate, true)
            }
            if full { gate.open() }
            return .held(gate, then: answer)
        }
        return most
    }

    func testBatchesGoOutTogetherAgainstAHostThatIsNotPublic() throws {
        let most = holdAnswers(together: 4, total: 5)
        var config = rig.config(places: 500)
        config.refresh.parallelRequests = 4
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [100, 100, 100, 100, 100])
        XCTAssertEqual(most.withLockedValue { $0 }, 4, "four requests were on the wire at once")
        XCTAssertEqual(rig.placesUp, 500)
        XCTAssertEqual(rig.store.telemetry.upstreamCount(provider: .openMeteo, code: "200"), 5)
    }

    func testThePublicHostGetsOneRequestAtATimeAndAnyOtherTheSetting() throws {
        var config = Config(places: [])
        config.refresh.parallelRequests = 6
        let client = CurlHTTPClient(userAgent: "cloudy-tests")
        func parallel(_ url: String) -> Int? {
            config.provider = ProviderSettings(url: url)
            let provider = ProviderFactory.make(
                config, timeout: RequestTimeout(5), client: client, recorder: ExporterTelemetry(startedAt: 0),
                logger: rig.log.logger, clock: rig.clock)
            return (provider as? OpenMeteoProvider)?.parallelRequests
        }
        XCTAssertEqual(parallel("https://api.open-meteo.com"), 1)
        XCTAssertEqual(parallel("http://api.open-meteo.com/"), 1)
        XCTAssertEqual(parallel("https://customer-api.open-meteo.com"), 6)
        XCTAssertEqual(parallel("http://127.0.0.1:8080"), 6)
    }

    /// A reload of `parallel_requests` asks nothing at once, and the next refresh on the schedule
    /// goes with the new number in flight.
    func testAReloadedParallelRequestsHoldsFromTheNextRefresh() throws {
        var config = rig.config(places: 400, interval: 60)
        config.refresh.parallelRequests = 1
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 4)
        var wider = config
        wider.refresh.parallelRequests = 4
        rig.reload(to: wider, from: config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 4, "the reload asks nothing")
        let most = holdAnswers(together: 4, total: 4)
        rig.clock.advance(by: 60)
        XCTAssertEqual(rig.asked.count, 8)
        XCTAssertEqual(most.withLockedValue { $0 }, 4, "four requests were on the wire at once")
        XCTAssertEqual(rig.placesUp, 400)
    }
}
