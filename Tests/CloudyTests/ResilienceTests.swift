import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// Answers collected from several threads.
final class NIOLockedAnswers: Sendable {
    private let box = NIOLockedValueBox<[String]>([])
    func append(_ answer: String) { box.withLockedValue { $0.append(answer) } }
    var all: [String] { box.withLockedValue { $0 } }
}

/// A bad afternoon at the weather API, hostile clients and hostile config, against the real
/// binary: the process stays up, scrapes stay fast, only the affected places go down.
final class ResilienceTests: FakeWeatherTestCase {

    func config(
        interval: String = "1s", timeout: String = "1s", staleAfter: String = "30m", provider extra: String = "",
        places: [(String, Double, Double)] = everyPlace
    ) -> String {
        Self.config(
            url: fake.baseURL, interval: interval, timeout: timeout, staleAfter: staleAfter, provider: extra,
            places: places)
    }

    static let everyPlace = [("Berlin", 52.52, 13.41), ("London", 51.5085, -0.1257), ("New York", 40.7143, -74.006)]

    static func config(
        url: String, interval: String = "1s", timeout: String = "1s", staleAfter: String = "30m",
        provider extra: String = "",
        places: [(String, Double, Double)] = everyPlace
    ) -> String {
        var text = """
            provider:
              url: \(url)
            \(extra)
            refresh:
              interval: \(interval)
              timeout: \(timeout)
              stale_after: \(staleAfter)
            locations:

            """
        for (name, latitude, longitude) in places {
            text += "  - name: \(name)\n    latitude: \(latitude)\n    longitude: \(longitude)\n"
        }
        return text
    }

    static func up(_ metrics: [String: Double], _ place: String) -> Double? {
        metrics["weather_up{location=\"\(place)\"}"]
    }

    /// Each fault once (count 1): the affected places go down and keep their last good values,
    /// the others stay up, scrapes stay fast, and everything recovers with the next answer. The
    /// faults are spread over seven exporter/fake pairs that run side by side, two faults each,
    /// each fault waiting for its own refreshes (about two intervals).
    func testEveryUpstreamFaultLeavesTheExporterServing() throws {
        let everyPlace = ["Berlin", "London", "New York"]
        let faults: [(json: String, down: [String])] = [
            ("{\"mode\":\"hang\"}", everyPlace),
            ("{\"mode\":\"slow\",\"delay_ms\":100}", everyPlace),
            ("{\"mode\":\"status\",\"status\":500}", everyPlace),
            ("{\"mode\":\"status\",\"status\":503}", everyPlace),
            // A 429 that is not a quota refusal (those hold requests a minute or more: QuietPeriodTests).
            (
                "{\"mode\":\"status\",\"status\":429,\"retry_after\":1,"
                    + "\"body\":{\"error\":true,\"reason\":\"Too many concurrent requests\"}}", everyPlace
            ),
            ("{\"mode\":\"malformed_json\"}", everyPlace),
            ("{\"mode\":\"truncated\"}", everyPlace),
            ("{\"mode\":\"empty\"}", everyPlace),
            ("{\"mode\":\"html\"}", everyPlace),
            ("{\"mode\":\"huge\",\"bytes\":67108864}", everyPlace),
            ("{\"mode\":\"missing_section\",\"section\":\"current\"}", everyPlace),
            ("{\"mode\":\"missing_section\",\"section\":\"daily\",\"place\":2}", ["New York"]),
            ("{\"mode\":\"wrong_count\"}", everyPlace),
            ("{\"mode\":\"bad_entry\",\"place\":1}", ["London"]),
        ]
        let lanes = 7
        // Processes start and stop on this thread; the lanes only talk HTTP.
        let fakes = try (0..<lanes).map { _ in try FakeWeatherAPI() }
        defer { for fake in fakes { fake.stop() } }
        let exporters = try fakes.map { try ExporterProcess(config: Self.config(url: $0.baseURL)) }
        for exporter in exporters { try exporter.waitFor("/readyz") }
        let problems = NIOLockedAnswers()
        let slowest = NIOLockedValueBox(0.0)
        let codes = NIOLockedValueBox([String: Double]())
        let group = DispatchGroup()
        for (lane, (fake, exporter)) in zip(fakes, exporters).enumerated() {
            // A queue of its own: the lanes block on HTTP, and Linux's global queue runs only a
            // few such blocks at once (they started seconds apart there).
            DispatchQueue(label: "fault lane \(lane)").async(group: group) {
                do {
                    var laneSlowest = 0.0
                    for fault in faults.enumerated().filter({ $0.offset % lanes == lane }).map(\.element) {
                        try fake.control("fault", String(fault.json.dropLast()) + ",\"count\":1}")
                        let during = try exporter.metrics(slowest: &laneSlowest) { metrics in
                            fault.down.allSatisfy { Self.up(metrics, $0) == 0 }
                        }
                        for place in everyPlace where Self.up(during, place) != (fault.down.contains(place) ? 0 : 1) {
                            problems.append(
                                "\(fault.json): weather_up of \(place) is \(String(describing: Self.up(during, place)))"
                            )
                        }
                        if during["weather_temperature_celsius{location=\"Berlin\"}"] != 24.5 {
                            problems.append("\(fault.json): the last good value was not kept")
                        }
                        _ = try exporter.metrics(slowest: &laneSlowest) { metrics in
                            everyPlace.allSatisfy { Self.up(metrics, $0) == 1 }
                        }
                    }
                    for (series, value) in try exporter.metrics()
                    where series.hasPrefix("cloudy_exporter_upstream_requests_total") {
                        codes.withLockedValue { $0[series, default: 0] += value }
                    }
                    slowest.withLockedValue { $0 = max($0, laneSlowest) }
                } catch {
                    problems.append("lane \(lane): \(error)")
                }
            }
        }
        group.wait()
        for exporter in exporters { XCTAssertTrue(exporter.process.isRunning, exporter.log) }
        for exporter in exporters { exporter.process.interrupt() }  // side by side; deinit waits for each
        XCTAssertEqual(problems.all, [])
        XCTAssertLessThan(slowest.withLockedValue { $0 }, 0.5, "a scrape never waits on the weather API")
        for code in ["timeout", "500", "503", "429", "decode", "truncated", "too_large"] {
            let series = "cloudy_exporter_upstream_requests_total{provider=\"open-meteo\",code=\"\(code)\"}"
            XCTAssertGreaterThanOrEqual(codes.withLockedValue { $0[series] } ?? 0, 1, code)
        }
    }

    func testARefusedConnectionMarksEveryPlaceDownAndTheExporterServes() throws {
        let closed = try ClosedPort()
        let yaml = config().replacingOccurrences(of: fake.baseURL, with: "http://127.0.0.1:\(closed.port)")
        let exporter = try ExporterProcess(config: yaml)
        try exporter.waitFor("/healthz")
        var slowest = 0.0
        // Waits for the first attempt to be recorded: before it, the waiting page has
        // weather_up 0 too (a scrape under ThreadSanitizer can come that early).
        let metrics = try exporter.metrics(slowest: &slowest) {
            $0["weather_last_attempt_timestamp_seconds{location=\"Berlin\"}"] != nil
                && $0["weather_up{location=\"Berlin\"}"] == 0
        }
        XCTAssertGreaterThanOrEqual(
            metrics["cloudy_exporter_upstream_requests_total{provider=\"open-meteo\",code=\"connect\"}"] ?? 0, 1)
        let ready = try exporter.get("/readyz")
        XCTAssertEqual(ready.status, 503)
        XCTAssertTrue(
            String(decoding: ready.body, as: UTF8.self).contains("no place has been refreshed successfully yet"))
        XCTAssertTrue(exporter.process.isRunning)
        XCTAssertLessThan(slowest, 0.5)
    }

    func testNullsAreAbsentSamplesAndThePlaceStaysUp() throws {
        // The fault first: the exporter's first refresh may go out as soon as it listens.
        try fake.control("fault", "{\"mode\":\"nulls\"}")
        let exporter = try ExporterProcess(config: config(interval: "1h"))
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        XCTAssertEqual(Self.up(metrics, "Berlin"), 1)
        XCTAssertNil(metrics["weather_temperature_celsius{location=\"Berlin\"}"])
        XCTAssertNil(metrics["weather_forecast_daily_temperature_max_celsius{location=\"Berlin\",day=\"0\"}"])
        XCTAssertFalse(
            metrics.keys.contains { $0.hasPrefix("weather_temperature") || $0.hasPrefix("weather_forecast") },
            "null is never 0")
    }

    func testAPIKeyNeverLeaks() throws {
        let key = "PLANTED-KEY-7f3a9c1e5b"
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-key-\(UUID().uuidString)")
        try "\(key)\n".write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        // The provider echoes the key in its error, as some do; Cloudy must still not repeat it.
        try fake.control(
            "fault",
            "{\"mode\":\"status\",\"status\":400,\"body\":\"{\\\"error\\\":true,\\\"reason\\\":\\\"The supplied API key \(key) is invalid.\\\"}\",\"count\":2}"
        )
        let exporter = try ExporterProcess(
            config: config(provider: "  api_key_file: \(keyFile.path)"), extraArguments: ["--log.level", "debug"])
        try exporter.waitFor("/healthz")
        var slowest = 0.0
        _ = try exporter.metrics(slowest: &slowest) { Self.up($0, "Berlin") == 1 }
        let query = try XCTUnwrap(try fake.requests().first?["query"] as? [String: String])
        XCTAssertEqual(query["apikey"], key, "the key does reach the provider")
        var everything = exporter.log
        for path in ["/metrics", "/", "/readyz", "/healthz", "/nope"] {
            everything += String(decoding: try exporter.get(path).body, as: UTF8.self)
        }
        XCTAssertTrue(exporter.log.contains("The supplied API key <redacted> is invalid."), exporter.log)
        XCTAssertFalse(everything.contains(key), "the key appears nowhere")
        XCTAssertFalse(everything.contains("7f3a9c1e5b"))
    }

    func testHostilePlaceNamesStayValidAndEscaped() throws {
        let names = [
            "Quote \\\"q\\\"", "Back\\\\slash", "New\\nline", "<script>alert(1)</script>", "☁️ Wolkig 🌧",
            String(repeating: "x", count: 300),
        ]
        var yaml = config(interval: "1h", places: [])
        for (index, name) in names.enumerated() {
            yaml += "  - name: \"\(name)\"\n    latitude: \(10 + index)\n    longitude: 10\n"
        }
        let exporter = try ExporterProcess(config: yaml)
        try exporter.waitFor("/readyz")
        let body = try exporter.get("/metrics").body
        let check = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(body))
        XCTAssertEqual(check.stdout + check.stderr, "", "promtool finds nothing")
        XCTAssertEqual(check.status, 0)
        let text = String(decoding: body, as: UTF8.self)
        XCTAssertTrue(text.contains("weather_up{location=\"Quote \\\"q\\\"\"} 1"))
        XCTAssertTrue(text.contains("weather_up{location=\"New\\nline\"} 1"))
        XCTAssertTrue(text.contains("weather_up{location=\"☁️ Wolkig 🌧\"} 1"))
        let html = String(decoding: try exporter.get("/").body, as: UTF8.self)
        XCTAssertFalse(html.contains("<script>alert"))
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(html.contains("Quote &quot;q&quot;"))

        let refused = config(interval: "1h", places: []) + "  - name: \"Bell\\a\"\n    latitude: 1\n    longitude: 1\n"
        try refused.write(to: exporter.configFile, atomically: true, encoding: .utf8)
        let result = try runProgram(
            TestPaths.exporterBinary.path, ["--config.check", "--config.file", exporter.configFile.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("locations[0].name: contains the control character U+0007"), result.stderr)
    }

    /// Scrapes racing the signal complete whole, or are refused or closed before an answer begins;
    /// none is cut mid-answer.
    func testSIGTERMWhileARefreshHangsExitsZeroWithinTwoSeconds() throws {
        let exporter = try ExporterProcess(config: config(interval: "1s", timeout: "30s"))
        try exporter.waitFor("/readyz")
        try fake.control("fault", "{\"mode\":\"hang\"}")
        try waitUntil("a refresh stuck at the hanging fake", log: exporter.log) { try fake.requestsInFlight() > 0 }
        let idle = try RawConnection(port: exporter.port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let answers = NIOLockedAnswers()
        let group = DispatchGroup()
        let sent = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        let port = exporter.port
        for index in 0..<20 {
            // Queues of their own (CONTRIBUTING, "side by side"): the global queue runs only a few
            // of these blocking scrapes at once, and they are meant to race the signal together.
            DispatchQueue(label: "scrape \(index)").async(group: group) {
                Thread.sleep(forTimeInterval: Double(index) * 0.002)
                guard let scrape = try? RawConnection(port: port) else { return answers.append("refused") }
                scrape.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                sent.signal()
                answers.append(scrape.readUntilClosed().text)
                answered.signal()
            }
        }
        // The signal goes once a first scrape has its answer and five requests are out, the others
        // still on their way; not after a fixed time: under ThreadSanitizer on a busy machine this
        // process can send its first scrape, or the exporter read it, only after that time.
        XCTAssertEqual(answered.wait(timeout: .now() + 10), .success, "a scrape was answered before the signal")
        for _ in 0..<5 { XCTAssertEqual(sent.wait(timeout: .now() + 10), .success, "a scrape was sent") }
        let result = exporter.terminate()
        group.wait()
        XCTAssertEqual(result.status, 0, exporter.log)
        XCTAssertLessThan(result.seconds, 2)
        XCTAssertTrue(idle.readUntilClosed().closed, "idle keep-alive connections are closed")
        for answer in answers.all where !answer.isEmpty && answer != "refused" {
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200 OK"), String(answer.prefix(100)))
            let parts = answer.components(separatedBy: "\r\n\r\n")
            let length = parts[0].split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }.flatMap {
                Int($0.dropFirst(16))
            }
            XCTAssertEqual(length, parts.dropFirst().joined(separator: "\r\n\r\n").utf8.count, "a whole answer")
        }
        let outcomes = Dictionary(grouping: answers.all) { $0.isEmpty ? "closed unanswered" : String($0.prefix(15)) }
        XCTAssertTrue(
            answers.all.contains { $0.hasPrefix("HTTP/1.1 200 OK") },
            "the scrapes before the signal were answered: \(outcomes.mapValues(\.count))")
    }

    func testSIGHUPReloadsAndABadConfigKeepsTheOldOne() throws {
        let exporter = try ExporterProcess(config: config(interval: "1h"))
        try exporter.waitFor("/readyz")
        try config(interval: "1h", places: [("Oslo", 59.91, 10.75)]).write(
            to: exporter.configFile, atomically: true, encoding: .utf8)
        kill(exporter.process.processIdentifier, SIGHUP)
        var slowest = 0.0
        let reloaded = try exporter.metrics(slowest: &slowest) { Self.up($0, "Oslo") == 1 }
        XCTAssertNil(Self.up(reloaded, "Berlin"))
        try "refresh: {interval: soon}\n".write(to: exporter.configFile, atomically: true, encoding: .utf8)
        kill(exporter.process.processIdentifier, SIGHUP)
        let refused = try exporter.metrics(slowest: &slowest) {
            $0["cloudy_exporter_config_last_reload_successful"] == 0
        }
        XCTAssertEqual(Self.up(refused, "Oslo"), 1)
        XCTAssertTrue(exporter.log.contains("config reload refused"), exporter.log)
        XCTAssertTrue(exporter.log.contains("refresh.interval: \\\"soon\\\" is not a duration"), exporter.log)
    }
}
