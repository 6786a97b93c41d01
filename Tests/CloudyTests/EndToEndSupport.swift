import Foundation
import XCTest

@testable import Cloudy

/// The fake Open-Meteo (`Tests/Fakes/fake_weather.py`) as a child process on 127.0.0.1.
final class FakeWeatherAPI: @unchecked Sendable {  // read-only after init; the fake serializes control calls
    let process = Process()
    let port: Int
    let client = CurlHTTPClient(userAgent: "cloudy-tests")
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(latencyMilliseconds: Int = 0) throws {
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Fakes/fake_weather.py").path
        // Debian's python3 (3.11, scripts/install-deps), as the other tests run it: one found on
        // PATH may be a version manager's shim, a shell script that cost more than the fake's own
        // start, once per fake.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--port", "0", "--quiet", "--latency-ms", String(latencyMilliseconds)]
        // Its modules compiled once and kept under .build, not beside the sources, even where
        // PYTHONDONTWRITEBYTECODE is set: ~20 ms less for each of the suite's ~80 fakes.
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = nil
        environment["PYTHONPYCACHEPREFIX"] = TestPaths.packageRoot.appendingPathComponent(".build/pycache").path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is "listening 127.0.0.1:PORT".
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: ":").last?.split(separator: "\n").first, let port = Int(portText)
        else {
            process.terminate()
            throw Failure("fake weather API did not start: \(text)")
        }
        self.port = port
    }

    deinit { stop() }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @discardableResult
    func control(_ path: String, _ json: String = "{}") throws -> String {
        let response = try client.fetch(
            HTTPRequest(
                url: baseURL + "/-/" + path, headers: [("Content-Type", "application/json")],
                timeout: 5, body: Array(json.utf8))
        ).get()
        guard response.status == 200 else {
            throw NSError(
                domain: "fake", code: response.status,
                userInfo: [NSLocalizedDescriptionKey: String(decoding: response.body, as: UTF8.self)])
        }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// The weather requests the fake has answered since the last reset.
    func requests() throws -> [[String: Any]] {
        try requestLog("requests")
    }

    /// Weather requests the fake is serving right now (a `hang` fault holds them).
    func requestsInFlight() throws -> Int {
        try requestLog("in_flight")
    }

    /// A field of the fake's request log; a log of another shape throws, so that a check that
    /// nothing more was asked cannot pass on an empty list.
    private func requestLog<Field>(_ field: String) throws -> Field {
        let body = try client.fetch(HTTPRequest(url: baseURL + "/-/requests", timeout: 5)).get().body
        let log = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        guard let value = log?[field] as? Field else {
            throw Failure(
                "the fake's /-/requests has no \(field) of type \(Field.self): \(String(decoding: body, as: UTF8.self).prefix(300))"
            )
        }
        return value
    }
}

/// A test case whose every test gets a fake weather API of its own (`fake`), stopped after it.
class FakeWeatherTestCase: XCTestCase {
    var fake: FakeWeatherAPI!

    /// Berlin, London and New York as `locations:` items, for configs that need a few places.
    static let threeCities = """
          - name: Berlin
            latitude: 52.52
            longitude: 13.41
          - name: London
            latitude: 51.5085
            longitude: -0.1257
          - name: New York
            latitude: 40.7143
            longitude: -74.006
        """

    override func setUpWithError() throws {
        try super.setUpWithError()
        fake = try FakeWeatherAPI()
    }

    override func tearDown() {
        fake?.stop()
        super.tearDown()
    }
}

/// The real `cloudy_exporter` binary, started with a config written for the test.
final class ExporterProcess: @unchecked Sendable {  // read-only after init; Process is thread-safe to query
    let process = Process()
    let port: Int
    let directory: URL
    let logFile: URL
    let configFile: URL
    let client = CurlHTTPClient(userAgent: "cloudy-tests")
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `unprivileged`: without capabilities, as the shipped deployments run it (root's are
    /// dropped through setpriv; any other user has none).
    init(
        config: String, extraArguments: [String] = [], environment: [String: String] = [:], unprivileged: Bool = false
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configFile = directory.appendingPathComponent("cloudy.yml")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        logFile = directory.appendingPathComponent("exporter.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let binary = TestPaths.exporterBinary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            XCTFail("\(binary.path) is missing: run `swift build` first (scripts/test does)")
            throw XCTSkip("no binary")
        }
        let storage =
            extraArguments.contains("--storage.path")
            ? [] : ["--storage.path", directory.appendingPathComponent("data").path]
        let command =
            ["--config.file", configFile.path, "--web.listen-address", "127.0.0.1:0"] + storage + extraArguments
        let dropping = unprivileged && getuid() == 0
        process.executableURL = dropping ? URL(fileURLWithPath: "/usr/bin/setpriv") : binary
        process.arguments = dropping ? ["--bounding-set=-all", "--inh-caps=-all", binary.path] + command : command
        process.environment = ProcessInfo.processInfo.environment.merging(strictNIO.merging(environment) { $1 }) { $1 }
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try process.run()
        port = try Self.boundPort(process, logFile: logFile)
    }

    /// The port the kernel gave the exporter's `127.0.0.1:0`, from its `listening` log line, or 0
    /// when it exited first (a start-up error the test expects). Picking a free port here and
    /// passing it on would race with the other test processes of `swift test --parallel`.
    private static func boundPort(_ process: Process, logFile: URL) throws -> Int {
        func listening() -> Int? {
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            guard let line = log.split(separator: "\n").first(where: { $0.contains("listening") }),
                let address = line.range(of: "127.0.0.1:")
            else { return nil }
            return Int(line[address.upperBound...].prefix { $0.isNumber })
        }
        var port: Int?
        try waitUntil("the exporter listens", timeout: 20) {
            port = listening()
            return port != nil || !process.isRunning
        }
        return port ?? 0
    }

    deinit {
        if process.isRunning {
            process.interrupt()
            process.waitUntilExit()
        }
        // An exporter that crashed as the test let it go (no test looks at its exit then): its
        // log is kept and named on stderr, where the suite's output shows it.
        if let text = try? String(contentsOf: logFile, encoding: .utf8),
            text.contains("Fatal error") || text.contains("Cannot schedule") || text.contains("crashed")
        {
            let kept = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cloudy-crashed-exporter-\(UUID().uuidString).log")
            try? FileManager.default.copyItem(at: logFile, to: kept)
            FileHandle.standardError.write(Data("an exporter a test started crashed; its log: \(kept.path)\n".utf8))
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    func get(_ path: String, headers: [(name: String, value: String)] = []) throws -> HTTPResponse {
        try client.fetch(HTTPRequest(url: baseURL + path, headers: headers, timeout: 5)).get()
    }

    func post(_ path: String) throws -> HTTPResponse {
        try client.fetch(HTTPRequest(url: baseURL + path, timeout: 5, body: [])).get()
    }

    /// Waits until `path` answers `status` (the server is up, or ready).
    func waitFor(_ path: String, status: Int = 200, timeout: Double = 20) throws {
        try waitUntil("\(path) answers \(status)", timeout: timeout, log: self.log) {
            guard process.isRunning else { throw Failure("exporter exited with \(process.terminationStatus):\n\(log)") }
            guard case .success(let response) = client.fetch(HTTPRequest(url: baseURL + path, timeout: 1)) else {
                return false
            }
            return response.status == status
        }
    }

    /// `/metrics` once `condition` holds of it, polled for at most `timeout` seconds; `slowest`
    /// keeps the longest a scrape took meanwhile.
    func metrics(
        timeout: Double = 10, slowest: inout Double,
        when condition: ([String: Double]) -> Bool
    ) throws -> [String: Double] {
        var latest: [String: Double] = [:]
        try waitUntil("the metrics condition holds", timeout: timeout, log: self.log) {
            let started = Date()
            latest = try metrics()
            slowest = max(slowest, Date().timeIntervalSince(started))
            return condition(latest)
        }
        return latest
    }

    func metrics(timeout: Double = 10, when condition: ([String: Double]) -> Bool) throws -> [String: Double] {
        var slowest = 0.0
        return try metrics(timeout: timeout, slowest: &slowest, when: condition)
    }

    /// `/metrics` parsed into `series → value`, e.g. `weather_up{location="Berlin"}` → 1.
    func metrics() throws -> [String: Double] {
        Exposition.parse(String(decoding: try get("/metrics").body, as: UTF8.self))
    }

    func terminate(signal: Int32 = SIGTERM) -> (status: Int32, seconds: Double) {
        let started = Date()
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return (process.terminationStatus, Date().timeIntervalSince(started))
    }
}

/// Polls `condition` every 50 ms until it holds; after `timeout` seconds fails, saying `what`
/// was awaited and the tail of `log`. The only way tests wait on a real process.
func waitUntil(
    _ what: String, timeout: Double = 10, log: @autoclosure () -> String = "", _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw Failure("waited \(timeout)s for: \(what); log:\n\(log().suffix(3000))") }
        Thread.sleep(forTimeInterval: 0.05)
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Relative comparison at the harness's tolerance (1e-9).
func assertClose(
    _ actual: Double?, _ expected: Double, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    guard let actual else {
        XCTFail("missing sample, expected \(expected) \(message)", file: file, line: line)
        return
    }
    let tolerance = max(abs(expected) * 1e-9, 1e-12)
    XCTAssertEqual(actual, expected, accuracy: tolerance, message, file: file, line: line)
}
