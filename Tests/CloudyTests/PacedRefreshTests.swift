import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// A refresh that costs more than a window of the quota allows is paced: its batches go out as
/// the `CallLedger` has room, the pages update per batch, and no window ever holds more than its
/// limit — counting what earlier refreshes spent. On a `ManualClock`, through libcurl.
final class PacedRefreshTests: XCTestCase {
    var rig: RefresherRig!

    override func setUpWithError() throws {
        rig = try RefresherRig()
    }

    override func tearDown() {
        rig.stop()
    }

    /// Fails when any `seconds`-long window of the requests asked more than `limit` calls.
    func assertNoWindowExceeded(_ seconds: Double, limit: Double, callsPerPlace: Double, line: UInt = #line) {
        for request in rig.asked {
            let inWindow = rig.asked.filter { $0.time > request.time - seconds && $0.time <= request.time }
            let calls = Double(inWindow.map(\.places).reduce(0, +)) * callsPerPlace
            XCTAssertLessThanOrEqual(calls, limit + 1e-9, "\(seconds) s window up to \(request.time)", line: line)
        }
    }

    /// 25 places under a quota of 10 calls a minute at one call a place (9 a batch, 90 %), every
    /// 600 s: started, and its first batch asked. Returns the config.
    @discardableResult
    func startTwentyFivePlacesTenAMinute() -> Config {
        let config = rig.config(places: 25, interval: 600)
        rig.start(config, budget: CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1))
        rig.clock.advance(by: 0)
        return config
    }

    func testABigRefreshGoesOutInBatchesAWindowApartAndThePageUpdatesPerBatch() throws {
        let budget = CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1)
        rig.start(rig.config(places: 25, interval: 600), budget: budget)
        let start = rig.clock.now()
        rig.clock.advance(by: 0)
        // 90 % of the limit (`RefreshPlan.margin`, as the plan counts a paced window): 9 places.
        XCTAssertEqual(rig.asked.map(\.places), [9])
        XCTAssertEqual(rig.placesWithWeather, 9, "the first batch is on the page")
        let page = String(buffer: rig.store.rendered.metrics.prometheus)
        XCTAssertTrue(
            page.contains("weather_up{location=\"Place 8\"} 1"),
            page.split(separator: "\n").filter { $0.hasPrefix("weather_up") }.joined(separator: "\n"))
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 61, accuracy: 1e-6, "a minute after, and a second")
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertEqual(rig.placesWithWeather, 18)
        let durationCount = "cloudy_exporter_refresh_duration_seconds_count 1"
        XCTAssertFalse(String(buffer: rig.store.rendered.metrics.prometheus).contains(durationCount))
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 7])
        XCTAssertTrue(
            String(buffer: rig.store.rendered.metrics.prometheus).contains(durationCount),
            "one refresh on the page once its last batch is in")
        XCTAssertEqual(rig.asked.map { $0.time - start }, [0, 61, 122])
        XCTAssertEqual(rig.placesUp, 25)
        XCTAssertEqual(rig.log.entries(containing: "refresh finished").count, 1, "one refresh, three batches")
        XCTAssertEqual(rig.log.entries(containing: "refresh paced").count, 1)
        XCTAssertEqual(
            try XCTUnwrap(rig.nextRefreshIn), 600 - 122, accuracy: 1e-6, "the interval counts from its start")
        assertNoWindowExceeded(60, limit: 9, callsPerPlace: 1)
    }

    func testPacingCountsWhatEarlierRefreshesSpentInEveryWindow() throws {
        // 2.9 calls a place as Open-Meteo counts Cloudy's request; 30 calls a minute, 70 an hour.
        let budget = CallBudget(quota: Quota(limits: [.minute: 30, .hour: 70]), callsPerPlace: 2.9)
        rig.start(rig.config(places: 15, interval: 60), budget: budget)
        rig.clock.advance(by: 2 * 3600)
        // Within 90 %: 9 places (26.1 calls) fit a minute's 27; 21 places (60.9 calls) an hour's 63.
        // The first refresh: 9, then 6 a minute later; the second, due then, gets the minute's
        // other 3 and, a minute later, the hour's last 3.
        XCTAssertEqual(Array(rig.asked.map(\.places).prefix(4)), [9, 6, 3, 3])
        XCTAssertEqual(rig.asked.map(\.places).reduce(0, +), 2 * 21, "21 places an hour, for two hours")
        // The hour's room comes back a second after the first batch leaves it.
        XCTAssertEqual(rig.asked.filter { $0.time - rig.asked[0].time == 3601 }.map(\.places), [9])
        assertNoWindowExceeded(60, limit: 27, callsPerPlace: 2.9)
        assertNoWindowExceeded(3600, limit: 63, callsPerPlace: 2.9)
        XCTAssertLessThanOrEqual(rig.refresher.callsSpent(inLast: 3600), 63)
    }

    func testWithoutAQuotaARefreshIsOneStep() throws {
        rig.start(rig.config(places: 250, interval: 60))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [100, 100, 50])
        XCTAssertEqual(Set(rig.asked.map(\.time)).count, 1)
        XCTAssertEqual(rig.placesUp, 250)
        XCTAssertEqual(rig.log.entries(containing: "refresh paced").count, 0)
    }

    /// Open-Meteo counts a failed request as one call, whatever its places and weight; a 200
    /// costs the weight of every place in it. The ledger and the metric agree.
    func testAnHTTPErrorCountsOneCallAndA200TheFullWeight() throws {
        let config = rig.config(places: 3, interval: 60)
        let weight = CallCost.openMeteo(config.forecast)
        let budget = CallBudget(quota: Quota(limits: [.day: 10_000]), callsPerPlace: weight)
        rig.answer(status: .serviceUnavailable, reason: "upstream down")
        rig.start(config, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [3])
        XCTAssertEqual(rig.refresher.callsSpent(inLast: 86400), 1, accuracy: 1e-9, "a 503 is one call")
        XCTAssertEqual(rig.store.telemetry.callCount(provider: .openMeteo), 1, accuracy: 1e-9)
        rig.answer(status: .tooManyRequests, reason: "Too many concurrent requests")
        rig.clock.advance(by: try XCTUnwrap(rig.nextRefreshIn))
        XCTAssertEqual(rig.refresher.callsSpent(inLast: 86400), 2, accuracy: 1e-9, "so is a 429")
        XCTAssertEqual(rig.store.telemetry.callCount(provider: .openMeteo), 2, accuracy: 1e-9)
        rig.answerForecasts()
        rig.clock.advance(by: try XCTUnwrap(rig.nextRefreshIn))
        XCTAssertEqual(rig.placesUp, 3)
        XCTAssertEqual(rig.refresher.callsSpent(inLast: 86400), 2 + 3 * weight, accuracy: 1e-9)
        XCTAssertEqual(rig.store.telemetry.callCount(provider: .openMeteo), 2 + 3 * weight, accuracy: 1e-9)
    }

    /// Shutdown during a paced refresh: the batch the request cut short carried still counts (it
    /// went out), no place is recorded as failing "the exporter is shutting down", and no
    /// back-off is logged.
    func testStoppingDuringAPacedBatchRecordsNothingAndCountsItsCalls() throws {
        let budget = CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1)
        let stopped = DispatchGroup()
        let entry = rig.entry
        let requests = NIOLockedValueBox(0)
        let refresher = NIOLockedValueBox<Refresher?>(nil)
        rig.answer { head in
            let count = requests.withLockedValue {
                $0 += 1
                return $0
            }
            guard count > 1 else {
                let count = RefresherRig.placeCount(head.uri)
                let body = "[" + Array(repeating: entry, count: count).joined(separator: ",") + "]"
                return .respond(status: .ok, headers: [], body: Array(body.utf8))
            }
            // The second batch is on the wire when the exporter shuts down.
            DispatchQueue.global().async(group: stopped) { refresher.withLockedValue { $0 }?.stop() }
            return .hang
        }
        let config = rig.config(places: 25, interval: 600)
        rig.start(config, budget: budget)
        refresher.withLockedValue { $0 = rig.refresher }
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.placesWithWeather, 9)
        rig.clock.advance(by: 61)
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertEqual(rig.store.statuses.filter { $0.lastError != nil }.count, 0, "nobody shows the shutdown")
        XCTAssertEqual(
            rig.store.telemetry.callCount(provider: .openMeteo), 18 * CallCost.openMeteo(config.forecast),
            accuracy: 1e-9, "the batch cut short went out: the provider may have counted it")
        XCTAssertEqual(rig.refresher.callsSpent(inLast: 60), 9, accuracy: 1e-9, "the batch cut short")
        XCTAssertEqual(rig.refresher.backoff.failures, 0)
        XCTAssertEqual(rig.log.entries(containing: "backing off").count, 0)
        XCTAssertEqual(rig.log.entries(containing: "place refresh failed").count, 0)
    }

    /// A 429 that is not the quota ("Too many concurrent requests") in a paced refresh ends it: the
    /// places still waiting are not asked and say so, and its Retry-After holds the next refresh
    /// back though the first batch was answered.
    func testARateLimitEndsAPacedRefreshAndItsRetryAfterHoldsTheNext() throws {
        startTwentyFivePlacesTenAMinute()
        rig.answer(status: .tooManyRequests, reason: "Too many concurrent requests", headers: [("Retry-After", "900")])
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertEqual(rig.log.entries(containing: "refresh finished").count, 1)
        let waiting = rig.store.statuses.filter {
            $0.lastError?.contains("not asked: the provider asked to wait") == true
        }
        XCTAssertEqual(waiting.count, 7)
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 900, accuracy: 1e-6, "Retry-After, past the interval's 539 s")
        rig.answerForecasts()
        rig.clock.advance(by: 899)
        XCTAssertEqual(rig.asked.count, 2)
        rig.clock.advance(by: 1)
        XCTAssertEqual(rig.asked.count, 3)
    }

    /// Shutdown while the second request of a batch is on the wire: the first one's answer was
    /// counted by the owner, and so may the one cut short be (it went out), so both stay spent,
    /// in quota.json too: a restart loop driven by SIGTERM must not spend them again.
    func testStoppingMidBatchKeepsTheCallsOfTheRequestsSent() throws {
        let budget = CallBudget(quota: Quota(limits: [.day: 10_000]), callsPerPlace: 1)
        let stopped = DispatchGroup()
        let entry = rig.entry
        let refresher = NIOLockedValueBox<Refresher?>(nil)
        rig.answer { head in
            let count = RefresherRig.placeCount(head.uri)
            guard count == 50 else {
                let body = "[" + Array(repeating: entry, count: count).joined(separator: ",") + "]"
                return .respond(status: .ok, headers: [], body: Array(body.utf8))
            }
            DispatchQueue.global().async(group: stopped) { refresher.withLockedValue { $0 }?.stop() }
            return .hang
        }
        rig.start(rig.config(places: 150, interval: 600), budget: budget)
        refresher.withLockedValue { $0 = rig.refresher }
        rig.clock.advance(by: 0)
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(rig.asked.map(\.places), [100, 50])
        XCTAssertEqual(rig.refresher.callsSpent(inLast: 86400), 150, accuracy: 1e-9, "both requests sent")
        let kept = QuotaState.load(
            from: QuotaState.file(in: rig.storage.path), provider: .openMeteo, url: rig.server.baseURL,
            logger: rig.log.logger)
        XCTAssertEqual(kept?.ledger.spent(inLast: 86400, at: rig.clock.now()) ?? 0, 150, accuracy: 1e-9)
    }

    /// A reload that adds a place during a paced refresh goes on with the places still waiting
    /// (and the new one), instead of asking the first places again.
    func testAReloadDuringAPacedRefreshCarriesItsWaitingPlacesOver() throws {
        let budget = CallBudget(quota: Quota(limits: [.minute: 10]), callsPerPlace: 1)
        let old = rig.config(places: 25, interval: 600)
        rig.start(old, budget: budget)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.placesWithWeather, 9)
        var new = old
        new.places.append(Place(name: "Added", latitude: 10, longitude: 10))
        new.places.removeAll { $0.name == "Place 20" }
        rig.reload(to: new, from: old)
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertEqual(rig.placesWithWeather, 18, "the next nine places, not the first nine again")
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 7], "15 left of 16, and the added place")
        XCTAssertEqual(rig.placesUp, 25)
        XCTAssertEqual(
            try XCTUnwrap(rig.nextRefreshIn), 600 - 122, accuracy: 1e-6, "the interval counts from the run's start")
    }

    /// A second reload before the first one's refresh begins carries the waiting places over too,
    /// and so does a third that changes only the interval.
    func testTwoReloadsInARowDuringAPacedRefreshStillCarryItsWaitingPlacesOver() throws {
        let old = startTwentyFivePlacesTenAMinute()
        var first = old
        first.places.append(Place(name: "Added", latitude: 10, longitude: 10))
        rig.reload(to: first, from: old)
        var second = first
        second.places.append(Place(name: "Added too", latitude: 11, longitude: 11))
        rig.reload(to: second, from: first)
        var third = second
        third.refresh.interval = 900
        rig.reload(to: third, from: second)  // the interval alone: the waiting places stay armed
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.placesWithWeather, 18, "the next nine places, not the first nine again")
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 9], "16 waiting and the two added")
        XCTAssertEqual(rig.placesUp, 27)
    }

    /// A reload that only removes places during a paced refresh goes on without them: no request
    /// asks a removed place, and no new refresh starts.
    func testAReloadThatOnlyRemovesPlacesLeavesThemOutOfAPacedRefresh() throws {
        let old = startTwentyFivePlacesTenAMinute()
        XCTAssertEqual(rig.asked.map(\.places), [9])
        var new = old
        new.places.removeAll { (10..<20).map { "Place \($0)" }.contains($0.name) }
        rig.reload(to: new, from: old)
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 6], "Place 9 and Places 20-24: the removed ten are not asked")
        XCTAssertFalse(rig.asked.contains { $0.uri.contains("-59.9,") }, "Place 10's latitude")
        XCTAssertEqual(rig.placesUp, 15)
        let finished = rig.log.entries(containing: "refresh finished")
        XCTAssertEqual(finished.count, 1)
        XCTAssertEqual(finished.first?.metadata["places_ok"], "15")
        XCTAssertEqual(finished.first?.metadata["places_failed"], "0", "the removed places are not its failures")
        XCTAssertEqual(
            try XCTUnwrap(rig.nextRefreshIn), 600 - 61, accuracy: 1e-6, "the interval counts from the run's start")
    }

    /// A reload that changes only what is shown (units, thresholds) during a paced refresh asks
    /// no place again: the run goes on with the places still waiting, their answers are recorded,
    /// and the page shows the new units at once.
    func testAReloadOfUnitsAndThresholdsAsksNoPlaceAgain() throws {
        let old = startTwentyFivePlacesTenAMinute()
        var new = old
        for index in new.places.indices {
            new.places[index].units = UnitSettings(temperature: [.fahrenheit])
            new.places[index].alerts = AlertThresholds([.frost: -5])
        }
        rig.reload(to: new, from: old)
        XCTAssertTrue(
            String(buffer: rig.store.rendered.metrics.prometheus).contains(
                "weather_temperature_fahrenheit{location=\"Place 0\"}"))
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9])
        XCTAssertEqual(rig.placesWithWeather, 18, "the next nine places, not the first nine again")
        rig.clock.advance(by: 61)
        XCTAssertEqual(rig.asked.map(\.places), [9, 9, 7])
        XCTAssertEqual(rig.placesUp, 25, "answers asked with the old units are recorded")
        rig.clock.advance(by: 600 - 122 - 1)
        XCTAssertEqual(rig.asked.count, 3, "no refresh before the interval is up")
        XCTAssertEqual(rig.log.entries(containing: "refresh finished").count, 1)
    }
}
