import Foundation
import NIOHTTP1
import XCTest

@testable import Cloudy

/// A quota 429 is read, not guessed: each refusal text starts the quiet period its window asks
/// for, nothing goes to the provider during it, every place shows the reason and when it lifts
/// (`/readyz`, `/`), the log says it once; a 400 is a config problem, logged once and never
/// asked again before the interval. On a `ManualClock`, through libcurl to a scripted upstream.
final class QuietPeriodTests: XCTestCase {
    var rig: RefresherRig!

    override func setUpWithError() throws {
        // 2026-06-15 12:20:34 UTC: inside a minute, an hour and a day, so each window's end differs.
        rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
    }

    override func tearDown() {
        rig.stop()
    }

    /// Seconds of the moment `text` was written for, in UTC.
    func utc(_ text: String) throws -> Double {
        let formatter = ISO8601DateFormatter()
        return try XCTUnwrap(formatter.date(from: text)).timeIntervalSince1970
    }

    func testEachOpenMeteoQuotaTextHoldsEveryRequestUntilItsWindowStartsAfresh() throws {
        let cases: [(reason: String, lifts: String)] = [
            ("Minutely API request limit exceeded. Please try again in one minute.", "2026-06-15T12:21:34Z"),
            ("Hourly API request limit exceeded. Please try again in the next hour.", "2026-06-15T13:01:00Z"),
            ("Daily API request limit exceeded. Please try again tomorrow.", "2026-06-16T00:01:00Z"),
        ]
        for (reason, lifts) in cases {
            rig.stop()
            rig = try RefresherRig(clock: ManualClock(now: 1_781_526_034))
            let start = rig.clock.now()
            rig.answer(status: .tooManyRequests, reason: reason)
            rig.start(rig.config(places: 3, interval: 60))
            rig.clock.advance(by: 0)
            XCTAssertEqual(rig.asked.count, 1, reason)
            let until = try utc(lifts)
            let shown = QuietPeriod.utcTime(until)
            XCTAssertEqual(rig.nextRefreshIn ?? 0, until - start, accuracy: 1e-6, reason)

            // /readyz (not ready yet: its one line) and every place's card on / name the reason
            // and the lift time.
            XCTAssertEqual(
                rig.readyz,
                "not ready: no place has been refreshed successfully yet: "
                    + "no requests to open-meteo until \(shown): open-meteo: HTTP 429: \(reason)")
            for status in rig.store.statuses {
                let card = StatusViewModel(status: status, units: status.place.units, now: start, staleAfter: 1800)
                XCTAssertEqual(
                    card.stateDetail, "no requests to open-meteo until \(shown): open-meteo: HTTP 429: \(reason)")
            }
            XCTAssertTrue(rig.landing.contains("no requests to open-meteo until \(shown)"))
            XCTAssertTrue(rig.landing.contains(reason), reason)
            // Said once in the log, not per place.
            let said = rig.log.entries(containing: "refuses requests for its quota")
            XCTAssertEqual(said.count, 1, reason)
            XCTAssertEqual(said.first?.metadata["until"]?.description, shown)
            XCTAssertEqual(rig.log.entries(containing: "place refresh failed").count, 0)

            rig.answerForecasts()
            rig.clock.advance(by: until - start - 0.5)
            XCTAssertEqual(rig.asked.count, 1, "\(reason): nothing is sent during the quiet period")
            XCTAssertEqual(rig.log.entries(containing: "refuses requests for its quota").count, 1)
            rig.clock.advance(by: 0.5)
            XCTAssertEqual(rig.asked.count, 2, "\(reason): asked again when it lifts")
            XCTAssertEqual(rig.placesUp, 3)
            XCTAssertEqual(rig.readyz, "ready", "the quiet period is gone once lifted")
            XCTAssertEqual(rig.nextRefreshIn ?? 0, 60, accuracy: 1e-6, "the interval counts from the resumed refresh")
        }
    }

    func testSwitchingToAnotherProviderURLEndsTheQuietPeriodAndAsksTheNewOneAtOnce() throws {
        rig.answer(status: .tooManyRequests, reason: "Daily API request limit exceeded. Please try again tomorrow.")
        let old = rig.config(places: 2, interval: 60)
        rig.start(old)
        rig.clock.advance(by: 0)
        XCTAssertNotNil(rig.refresher.quietPeriod)
        XCTAssertTrue(rig.readyz.contains("no requests to open-meteo until"), rig.readyz)
        // Another server (a self-hosted instance): a quota that is not the refused one.
        let mirror = try rig.mirror()
        defer { mirror.server.stop() }
        var new = old
        new.provider = ProviderSettings(url: mirror.server.baseURL)
        rig.reload(to: new, from: old)
        rig.clock.advance(by: 0)
        XCTAssertEqual(mirror.asked.withLockedValue { $0 }, [2], "the new provider is asked at once")
        XCTAssertNil(rig.refresher.quietPeriod)
        XCTAssertEqual(rig.refresher.backoff.notBefore, 0)
        XCTAssertEqual(rig.placesUp, 2)
        XCTAssertEqual(rig.readyz, "ready", "no place shows the old provider's quiet period")
        XCTAssertEqual(try XCTUnwrap(rig.nextRefreshIn), 60, accuracy: 1e-6)
    }

    /// A minute's quota refusal with `retryAfter` holds both places back for `seconds`, then
    /// asks them again.
    func assertMinuteRefusal(retryAfter: String, holds seconds: Double) {
        let start = rig.clock.now()
        rig.answer(
            status: .tooManyRequests, reason: "Minutely API request limit exceeded. Please try again in one minute.",
            headers: [("Retry-After", retryAfter)])
        rig.start(rig.config(places: 2))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.refresher.account.quietPeriod?.until, start + seconds)
        XCTAssertTrue(rig.readyz.contains("until \(QuietPeriod.utcTime(start + seconds))"), rig.readyz)
        rig.answerForecasts()
        rig.clock.advance(by: seconds - 1)
        XCTAssertEqual(rig.asked.count, 1, "held back")
        rig.clock.advance(by: 1)
        XCTAssertEqual(rig.asked.count, 2)
        XCTAssertEqual(rig.placesUp, 2)
    }

    func testARetryAfterLaterThanTheWindowWins() {
        assertMinuteRefusal(retryAfter: "300", holds: 300)
    }

    /// A `Retry-After` is honoured up to a day, on a quota refusal as on any other answer: a
    /// minute's refusal asking for a month (a proxy's header, a skewed date) is not a month.
    func testARetryAfterPastADayIsADay() {
        assertMinuteRefusal(retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", holds: 86400)
    }

    func testANonQuota429IsAnOrdinaryRateLimitWithBackOff() throws {
        rig.answer(status: .tooManyRequests, reason: "Too many concurrent requests")
        rig.start(rig.config(places: 2))
        rig.clock.advance(by: 0)
        XCTAssertFalse(rig.readyz.contains("no requests to"), rig.readyz)
        XCTAssertEqual(rig.log.entries(containing: "refuses requests for its quota").count, 0)
        XCTAssertEqual(rig.nextRefreshIn ?? 0, 60, accuracy: 1e-6, "the back-off's first wait")
    }

    func testAQuotaRefusalMidRefreshKeepsWhatCameAndAsksTheRestWhenItLifts() throws {
        let start = rig.clock.now()
        let entry = rig.entry
        // The first request (100 places) is answered, the second refused for the hour.
        rig.answer { head in
            if RefresherRig.placeCount(head.uri) == 100 {
                let body = "[" + Array(repeating: entry, count: 100).joined(separator: ",") + "]"
                return .respond(status: .ok, headers: [], body: Array(body.utf8))
            }
            let body =
                #"{"error":true,"reason":"Hourly API request limit exceeded. Please try again in the next hour."}"#
            return .respond(status: .tooManyRequests, headers: [], body: Array(body.utf8))
        }
        rig.start(rig.config(places: 150))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.map(\.places), [100, 50])
        XCTAssertEqual(rig.placesUp, 100, "the first batch's weather is on the page")
        XCTAssertEqual(
            rig.readyz.components(separatedBy: "\nquiet: ").count - 1, 100, "up places show the quiet period")
        XCTAssertEqual(rig.readyz.components(separatedBy: "\nfailing: ").count - 1, 50)
        rig.answerForecasts()
        let lift = try utc("2026-06-15T13:01:00Z")
        rig.clock.advance(by: lift - start - 1)
        XCTAssertEqual(rig.asked.count, 2)
        rig.clock.advance(by: 1)
        XCTAssertEqual(rig.asked.map(\.places), [100, 50, 50], "only the places still waiting are asked")
        XCTAssertEqual(rig.placesUp, 150)
        XCTAssertEqual(rig.log.entries(containing: "refresh finished").count, 1)
    }

    func testOpenWeatherMapsBlockIsAQuietPeriodThatBacksOff() throws {
        let start = rig.clock.now()
        let blocked = Array(
            #"{"cod":429, "message": "Your account is temporary blocked due to exceeding of requests limitation of your subscription type. Please choose the proper subscription https://openweathermap.org/price"}"#
                .utf8)
        rig.answer { _ in .respond(status: .tooManyRequests, headers: [], body: blocked) }
        var config = rig.config(places: 1, interval: 600)
        config.provider = ProviderSettings(name: .openWeatherMap, url: rig.server.baseURL, apiKey: Secret("owm-key"))
        rig.start(config)
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)
        // OpenWeatherMap names no window: the back-off's waits (interval, 2×, …; jitter pinned at ×1).
        XCTAssertTrue(rig.readyz.contains("temporary blocked"), rig.readyz)
        XCTAssertTrue(rig.readyz.contains("no requests to openweathermap until \(QuietPeriod.utcTime(start + 600))"))
        rig.clock.advance(by: 599)
        XCTAssertEqual(rig.asked.count, 1)
        rig.clock.advance(by: 1)
        XCTAssertEqual(rig.asked.count, 2, "asked again when it lifts, and blocked again")
        XCTAssertTrue(rig.readyz.contains("until \(QuietPeriod.utcTime(start + 600 + 1200))"), rig.readyz)
        XCTAssertEqual(rig.log.entries(containing: "refuses requests for its quota").count, 2, "once per quiet period")
        rig.clock.advance(by: 1199)
        XCTAssertEqual(rig.asked.count, 2)
        XCTAssertFalse(rig.readyz.contains("owm-key"), "the key never shows")
    }

    func testABadRequestIsLoggedOnceAndNeverAskedAgainBeforeTheInterval() throws {
        rig.answer(status: .badRequest, reason: "Latitude must be in range of -90 to 90°. Given: 91.0.")
        rig.start(rig.config(places: 3, interval: 60))
        rig.clock.advance(by: 0)
        XCTAssertEqual(rig.asked.count, 1)
        rig.clock.advance(by: 59.9)
        XCTAssertEqual(rig.asked.count, 1, "no retry before the interval")
        rig.clock.advance(by: 0.1)
        XCTAssertEqual(rig.asked.count, 2)
        rig.clock.advance(by: 119.9)
        XCTAssertEqual(rig.asked.count, 2, "and then the back-off's doubling")
        rig.clock.advance(by: 0.1)
        XCTAssertEqual(rig.asked.count, 3)
        let said = rig.log.entries(containing: "HTTP 400")
        XCTAssertEqual(said.count, 1, said.map(\.message).joined(separator: "\n"))
        XCTAssertEqual(said.first?.level, .error)
        XCTAssertEqual(said.first?.metadata["places"], "3", "the batch's three places, not the first alone")
        XCTAssertEqual(said.first?.metadata["locations"], "Place 0, Place 1, Place 2")
        XCTAssertEqual(said.first?.metadata["provider"], "open-meteo")
        XCTAssertEqual(rig.log.entries(containing: "place refresh failed").count, 0)
        XCTAssertTrue(rig.readyz.contains("Latitude must be in range"), "the places still show why")
    }

    func testRefusalTextsAreReadIntoTheirCause() throws {
        func cause(_ status: Int, _ body: String) -> WeatherFetchError.Cause {
            WeatherAPI.refusal(
                HTTPResponse(status: status, body: Array(body.utf8)), from: "x", explainedBy: .reason, now: 0
            ).cause
        }
        XCTAssertEqual(
            cause(429, String(decoding: try TestPaths.fixtureBytes("open-meteo-error-429.json"), as: UTF8.self)),
            .quota(.minute))
        XCTAssertEqual(
            cause(429, #"{"reason":"Hourly API request limit exceeded. Please try again in the next hour."}"#),
            .quota(.hour))
        XCTAssertEqual(
            cause(429, #"{"reason":"Daily API request limit exceeded. Please try again tomorrow."}"#), .quota(.day))
        XCTAssertEqual(cause(429, #"{"reason":"Too many concurrent requests"}"#), .other)
        XCTAssertEqual(cause(503, #"{"reason":"Daily API request limit exceeded."}"#), .other, "only a 429 is a quota")
        XCTAssertEqual(cause(400, #"{"reason":"Invalid timezone"}"#), .badRequest)
        let owm = WeatherAPI.refusal(
            HTTPResponse(
                status: 429,
                body: Array(
                    #"{"cod":429,"message":"Your account is temporary blocked due to exceeding of requests limitation"}"#
                        .utf8)),
            from: "openweathermap", explainedBy: .message, now: 0)
        XCTAssertEqual(owm.cause, .quota(nil))
        XCTAssertTrue(owm.isRateLimit)
    }

    func testLiftTimes() throws {
        let now = 1_781_526_034.0  // 2026-06-15 12:20:34 UTC
        XCTAssertEqual(QuietPeriod.lift(after: .minute, now: now), now + 60)
        XCTAssertEqual(QuietPeriod.lift(after: .hour, now: now), try utc("2026-06-15T13:01:00Z"))
        XCTAssertEqual(QuietPeriod.lift(after: .day, now: now), try utc("2026-06-16T00:01:00Z"))
        XCTAssertEqual(QuietPeriod.lift(after: .month, now: now), try utc("2026-07-01T00:01:00Z"))
        XCTAssertEqual(
            QuietPeriod.lift(after: .month, now: try utc("2026-12-31T23:59:59Z")), try utc("2027-01-01T00:01:00Z"))
        XCTAssertEqual(QuietPeriod.utcTime(now), "2026-06-15 12:20:34 UTC")
        // A lift inside a second shows that second: "no requests until" it holds to the second.
        XCTAssertEqual(QuietPeriod.utcTime(now + 0.7), "2026-06-15 12:20:34 UTC")
        XCTAssertEqual(QuietPeriod.utcTime(now - 0.3), "2026-06-15 12:20:33 UTC")
    }
}
