import Foundation
import XCTest

@testable import Cloudy

/// The web config on the server's real pipeline (EmbeddedChannel): logins on every endpoint,
/// the liveness opt-out, the rate limit on a `ManualClock`, extra headers, malformed
/// `Authorization` headers, and re-reading the file.
final class WebAccessTests: XCTestCase {
    var directory: URL!
    var webFile: URL!
    let clock = ManualClock()
    let log = RecordedLog()
    static let password = "pässwörd ☂"
    var hash = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        webFile = directory.appendingPathComponent("web.yml")
        hash = try TestCertificates.htpasswdHash(Self.password)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func connection(_ yaml: String) throws -> (EmbeddedHTTPConnection, WebConfigReloader) {
        try yaml.write(to: webFile, atomically: true, encoding: .utf8)
        let web = try WebConfigReloader(path: webFile.path, clock: clock, logger: log.logger)
        let routes = Routes(
            store: try makeServerTestStore(.ready), telemetryPath: "/metrics", webConfig: web,
            reload: ReloadRecorder().reload)
        return (try EmbeddedHTTPConnection(routes: routes), web)
    }

    func basic(_ user: String, _ password: String) -> String {
        basic(Array("\(user):\(password)".utf8))
    }

    func basic(_ bytes: [UInt8]) -> String {
        "Authorization: Basic " + Data(bytes).base64EncodedString()
    }

    var users: String { "basic_auth_users:\n  prometheus: \"\(hash)\"\n" }

    func testEveryEndpointAsksForTheLogin() throws {
        let (server, _) = try connection(users)
        let paths = [
            "/metrics", "/", "/places/Berlin", "/cloudy.css", "/favicon.svg", "/healthz", "/-/healthy", "/readyz",
        ]
        for path in paths {
            let response = try server.request(path)
            XCTAssertEqual(response.status, 401, path)
            XCTAssertEqual(response.header("WWW-Authenticate"), "Basic realm=\"cloudy_exporter\", charset=\"UTF-8\"")
        }
        XCTAssertEqual(try server.request("POST", "/-/reload").status, 401)
        XCTAssertEqual(try server.request("/no-such-page").status, 401, "not even a 404 without the login")
        XCTAssertEqual(server.offloadedWorkCount, 0, "no login, no bcrypt")
    }

    func testTheRightLoginPaysBcryptOnceThenComesFromTheCache() throws {
        let (server, _) = try connection(users)
        try server.send("GET", "/metrics", headers: [basic("prometheus", Self.password)])
        XCTAssertNil(try server.readResponse(), "waits for bcrypt, off the event loop")
        XCTAssertEqual(server.offloadedWorkCount, 1)
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 200)
        for path in ["/metrics", "/", "/places/Berlin", "/cloudy.css", "/favicon.svg", "/readyz"] {
            XCTAssertEqual(try server.request(path, headers: [basic("prometheus", Self.password)]).status, 200, path)
        }
        XCTAssertEqual(server.offloadedWorkCount, 0, "cached: no more bcrypt")
    }

    func testAWrongPasswordAndAnUnknownUserTakeTheSamePath() throws {
        let (server, web) = try connection(users)
        for header in [basic("prometheus", "wrong"), basic("nobody", Self.password)] {
            try server.send("GET", "/metrics", headers: [header])
            XCTAssertEqual(server.offloadedWorkCount, 1, "bcrypt runs for \(header)")
            server.runOffloadedWork()
            XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 401)
        }
        let auth = try XCTUnwrap(web.current().policy.auth)
        XCTAssertEqual(
            Bcrypt.cost(of: auth.dummyHash), Bcrypt.cost(of: hash), "the dummy costs what a user's hash costs")
    }

    func testPasswordBytesAreCheckedAsSent() throws {
        let (server, _) = try connection(users)
        // The same text in Latin-1 is other bytes: refused.
        let latin1 =
            Array("prometheus:".utf8) + Array(Self.password.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
        try server.send("GET", "/metrics", headers: [basic(latin1)])
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 401)
        XCTAssertTrue(server.isOpen)
    }

    func testMalformedAuthorizationHeadersAre401OrAClosedConnection() throws {
        let (server, _) = try connection(users)
        for header in [
            "Authorization: Basic " + Data("no-colon".utf8).base64EncodedString(), "Authorization: Basic %%%notbase64",
            "Authorization: Bearer abc", "Authorization: Basic",
            "Authorization: Basic " + Data([0xFF, 0xFE]).base64EncodedString(),
        ] {
            XCTAssertEqual(try server.request("/metrics", headers: [header]).status, 401, header)
        }
        XCTAssertEqual(server.offloadedWorkCount, 0)
        try server.send(
            "GET", "/metrics", headers: ["Authorization: Basic " + String(repeating: "QUFB", count: 262_144)])
        let response = try server.readResponse()
        XCTAssertTrue([400, 431].contains(response?.status ?? 400), "\(String(describing: response?.status))")
        XCTAssertFalse(server.isOpen, "a 1 MB header closes the connection")
    }

    func testOnlyTheListedLivenessPathsAreOpen() throws {
        let (server, _) = try connection(users + "auth_excluded_paths: [/healthz]\n")
        XCTAssertEqual(try server.request("/healthz").status, 200)
        XCTAssertEqual(try server.request("/healthz?probe=1").status, 200)
        XCTAssertEqual(try server.request("/-/healthy").status, 401)
        XCTAssertEqual(try server.request("/metrics").status, 401)
        XCTAssertEqual(try server.request("/readyz").status, 401)
    }

    func testTheRateLimitIsATokenBucketOnTheClock() throws {
        let (server, _) = try connection("rate_limit:\n  interval: 1s\n  burst: 2\n")
        XCTAssertEqual(try server.request("/healthz").status, 200)
        XCTAssertEqual(try server.request("/metrics").status, 200)
        XCTAssertEqual(try server.request("/metrics").status, 429)
        clock.advance(by: 0.5)
        XCTAssertEqual(try server.request("/metrics").status, 429, "half a token")
        clock.advance(by: 0.5)
        XCTAssertEqual(try server.request("/metrics").status, 200)
        clock.advance(by: 60)
        XCTAssertEqual(try server.request("/metrics").status, 200)
        XCTAssertEqual(try server.request("/metrics").status, 200)
        XCTAssertEqual(try server.request("/metrics").status, 429, "never more than burst")
    }

    func testExtraHeadersGoOnEveryAnswer() throws {
        let (server, _) = try connection(
            users + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n    x-content-type-options: nosniff\n")
        for response in [try server.request("/metrics"), try server.request("/nope")] {
            XCTAssertEqual(response.header("X-Frame-Options"), "deny")
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff")
        }
    }

    func testAChangedFileAppliesWithinASecondAndABrokenOneKeepsTheLastGood() throws {
        let (server, web) = try connection(users)
        let login = basic("prometheus", Self.password)
        try server.send("GET", "/metrics", headers: [login])
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 200)

        // A new user list: seen at the next look (once a second on the clock).
        let otherHash = try TestCertificates.htpasswdHash("other")
        try "basic_auth_users:\n  grafana: \"\(otherHash)\"\n".write(to: webFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try server.request("/metrics", headers: [login]).status, 200, "not looked at yet")
        clock.advance(by: 1)
        try server.send("GET", "/metrics", headers: [login])
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 401, "prometheus is gone")
        XCTAssertEqual(gauge(web), 1)

        // A broken file: refused, logged once, the gauge says so, grafana still gets in.
        let secret = "hunter2-in-clear"
        try "basic_auth_users:\n  grafana: \(secret)\n".write(to: webFile, atomically: true, encoding: .utf8)
        for _ in 0..<3 {
            clock.advance(by: 1)
            try server.send("GET", "/metrics", headers: [basic("grafana", "other")])
            server.runOffloadedWork()
            XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 200)
        }
        XCTAssertEqual(gauge(web), 0)
        XCTAssertEqual(log.entries(containing: "web config re-read refused").count, 1, "logged once")
        let everything = log.all.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        for leak in [secret, hash, otherHash, Self.password, "other"] {
            XCTAssertFalse(everything.contains(leak), "the log holds \(leak): \(everything)")
        }
        XCTAssertTrue(everything.contains("basic_auth_users.grafana"), everything)

        // Fixed again: back to 1.
        try "basic_auth_users:\n  grafana: \"\(otherHash)\"\n".write(to: webFile, atomically: true, encoding: .utf8)
        clock.advance(by: 1)
        _ = web.current()
        XCTAssertEqual(gauge(web), 1)
    }

    func testTLSCannotBeTurnedOnByAReRead() throws {
        let (_, web) = try connection(users)
        let directory = try TestCertificates.directory().path
        try "tls_server_config:\n  cert_file: \(directory)/server.pem\n  key_file: \(directory)/server.key\n"
            .write(to: webFile, atomically: true, encoding: .utf8)
        clock.advance(by: 1)
        XCTAssertNil(web.current().tls)
        XCTAssertEqual(gauge(web), 0)
        XCTAssertEqual(
            log.entries(containing: "refused").first?.metadata["reason"]?.description.contains("restart"), true)
    }

    /// The two gauges as a scrape appends them, compared with Fixtures/golden/web-config.prom
    /// (which MetricCatalogueTests holds docs/metrics.md to). Regenerate with
    /// `CLOUDY_UPDATE_GOLDEN=1 swift test --filter WebAccessTests`.
    func testTheGaugesMatchTheirGoldenPage() throws {
        let (_, web) = try connection(users)
        var writer = ExpositionWriter(capacity: 1024)
        for family in web.addMetrics(to: MetricFamilies()).sorted() { writer.write(family, format: .prometheus) }
        let url = TestPaths.fixtures.appendingPathComponent("golden/web-config.prom")
        if ProcessInfo.processInfo.environment["CLOUDY_UPDATE_GOLDEN"] == "1" {
            try Data(writer.bytes).write(to: url)
        }
        XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), try String(contentsOf: url, encoding: .utf8))
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(writer.bytes))
        XCTAssertEqual(result.stdout + result.stderr, "")
    }

    func gauge(_ web: WebConfigReloader) -> Double? {
        web.addMetrics(to: MetricFamilies()).families.first {
            $0.descriptor == WebConfigReloader.lastReloadSuccessful
        }?.samples.first?.value
    }
}
