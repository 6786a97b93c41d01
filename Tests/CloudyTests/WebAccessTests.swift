import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import XCTest

@testable import Cloudy

/// The web config on the server's real pipeline (EmbeddedChannel): logins on every endpoint,
/// the liveness opt-out, the rate limit on a `ManualClock`, extra headers, malformed
/// `Authorization` headers, and re-reading the file.
final class WebAccessTests: WebConfigTestCase {

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
        let (server, web) = try connection(
            users + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n    x-content-type-options: nosniff\n")
        // The last: a connection's first request refused for its body's size, before anything else.
        let tooLarge = [UInt8](repeating: 0x61, count: HTTPRequestHandler.maxRequestBody + 1)
        let first = try EmbeddedHTTPConnection(routes: routes(web)).request("POST", "/-/reload", body: tooLarge)
        XCTAssertEqual(first.status, 413)
        for response in [try server.request("/metrics"), try server.request("/nope"), first] {
            XCTAssertEqual(response.header("X-Frame-Options"), "deny")
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff")
        }
    }

    /// A configured Content-Security-Policy is the HTML pages' one, not a second beside theirs
    /// (browsers enforce every policy, so two would block what either forbids).
    func testAConfiguredPolicyReplacesThePagesOwn() throws {
        let policy = "default-src 'none'; style-src 'self'"
        let (server, _) = try connection("http_server_config:\n  headers:\n    Content-Security-Policy: \(policy)\n")
        let page = try server.request("/")
        XCTAssertEqual(page.headers.filter { $0.name.lowercased() == "content-security-policy" }.map(\.value), [policy])
    }

    func testAChangedFileAppliesWithinASecondAndABrokenOneKeepsTheLastGood() throws {
        let (server, web) = try connection(users)
        let login = basic("prometheus", Self.password)
        try server.send("GET", "/metrics", headers: [login])
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 200)

        // A new user list: seen at the next look (once a second on the clock), read off the
        // event loop; the request that looked is served with the config in force until then.
        let otherHash = try TestCertificates.htpasswdHash("other")
        try "basic_auth_users:\n  grafana: \"\(otherHash)\"\n".write(to: webFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try server.request("/metrics", headers: [login]).status, 200, "not looked at yet")
        XCTAssertEqual(rereads.count, 0)
        clock.advance(by: 1)
        XCTAssertEqual(try server.request("/metrics", headers: [login]).status, 200, "the re-read is not done")
        XCTAssertEqual(rereads.run(), 1)
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
            rereads.run()
        }
        XCTAssertEqual(gauge(web), 0)
        XCTAssertEqual(log.entries(containing: "web config re-read refused").count, 1, "logged once")
        let everything = log.all.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        for leak in [secret, hash, otherHash, Self.password, "other"] {
            XCTAssertFalse(everything.contains(leak), "the log holds \(leak): \(everything)")
        }
        XCTAssertTrue(everything.contains("basic_auth_users.grafana"), everything)

        // Fixed again: back to 1.
        try reread(web, "basic_auth_users:\n  grafana: \"\(otherHash)\"\n")
        XCTAssertEqual(gauge(web), 1)
    }

    func testTLSCannotBeTurnedOnByAReRead() throws {
        let (_, web) = try connection(users)
        let directory = try TestCertificates.directory().path
        try reread(
            web, "tls_server_config:\n  cert_file: \(directory)/server.pem\n  key_file: \(directory)/server.key\n")
        XCTAssertNil(web.current().tls)
        XCTAssertEqual(gauge(web), 0)
        XCTAssertEqual(
            log.entries(containing: "refused").first?.metadata["reason"]?.description.contains("restart"), true)
    }

    /// Adding a costly user to a running config: the re-read (files, users, TLS) is handed off the
    /// event loop, requests and new connections go on with the last good config meanwhile, no
    /// second re-read starts while one runs, and the new config applies once it is done.
    func testAReReadRunsOffTheEventLoopOneAtATime() throws {
        let (server, web) = try connection(users)
        let login = basic("prometheus", Self.password)
        try server.send("GET", "/metrics", headers: [login])
        server.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(server.readResponse()).status, 200)

        // A well-formed hash at cost 15 (never run here: nobody logs in as alice).
        let costly = Bcrypt.withCost(try TestCertificates.htpasswdHash("alice's"), 15)
        try (users + "  alice: \"\(costly)\"\n").write(to: webFile, atomically: true, encoding: .utf8)
        clock.advance(by: 1)
        XCTAssertEqual(try server.request("/metrics", headers: [login]).status, 200)
        XCTAssertEqual(rereads.count, 1, "the re-read is handed off, not run by the request")
        XCTAssertTrue(web.isRereading)
        XCTAssertEqual(web.current().policy.auth?.users.count, 1, "the last good config serves meanwhile")
        let newcomer = try EmbeddedHTTPConnection(routes: routes(web))
        XCTAssertEqual(try newcomer.request("/metrics", headers: [login]).status, 200, "a new connection too")
        for _ in 0..<3 {
            clock.advance(by: 1)
            try (users + "  alice: \"\(costly)\"\n").write(to: webFile, atomically: true, encoding: .utf8)
            _ = web.current()
        }
        XCTAssertEqual(rereads.count, 1, "never two re-reads at once")

        XCTAssertEqual(rereads.run(), 1)
        XCTAssertFalse(web.isRereading)
        let auth = try XCTUnwrap(web.current().policy.auth)
        XCTAssertEqual(auth.users.keys.sorted(), ["alice", "prometheus"])
        XCTAssertEqual(auth.topCost, 15)
        XCTAssertEqual(Bcrypt.cost(of: auth.dummyHash), 15)
        // Changed again: the next look starts the next re-read.
        try (users + "  alice: \"\(costly)\"\n  bob: \"\(hash)\"\n").write(
            to: webFile, atomically: true, encoding: .utf8)
        clock.advance(by: 1)
        _ = web.current()
        XCTAssertEqual(rereads.run(), 1)
        XCTAssertEqual(web.current().policy.auth?.users.keys.sorted(), ["alice", "bob", "prometheus"])
        XCTAssertEqual(log.entries(containing: "web config re-read").count, 2)
    }

    /// `client_allowed_sans` with RequireAnyClientCert (the chain never verified) is taken, as in
    /// the toolkit, with a warning at start and at each re-read; with RequireAndVerifyClientCert none.
    func testClientAllowedSANsWithoutVerificationAreWarnedAbout() throws {
        let certificates = try TestCertificates.directory().path
        let tls =
            "tls_server_config:\n  cert_file: \(certificates)/server.pem\n  key_file: \(certificates)/server.key\n"
        let anyCert = tls + "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: [scraper.example]\n"
        let (_, web) = try connection(anyCert)
        let warning = "client_allowed_sans: with client_auth_type RequireAnyClientCert"
        XCTAssertEqual(log.entries(containing: warning).map(\.level), [.warning])
        try reread(web, anyCert + "  min_version: TLS13\n")
        XCTAssertEqual(log.entries(containing: warning).count, 2, "again at the re-read")
        try reread(
            web,
            tls + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: \(certificates)/ca.pem\n"
                + "  client_allowed_sans: [scraper.example]\n")
        XCTAssertEqual(web.current().tls?.clientAuth, .requireAndVerifyClientCert)
        XCTAssertEqual(log.entries(containing: warning).count, 2, "verified: no warning")
    }

    /// Plain HTTP to the TLS port: the 400 is written once, however many reads come before the
    /// close (here the write is held, as a slow socket holds it).
    func testPlainHTTPOnTheTLSPortIsAnsweredOnce() throws {
        let channel = EmbeddedChannel()
        let held = HeldWrites()
        try channel.pipeline.syncOperations.addHandler(held)
        try channel.pipeline.syncOperations.addHandler(PlainHTTPOnTLSPort())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 10150)).wait()
        for part in ["GET /metrics HTTP/1.1\r\n", "Host: x\r\n\r\n", "GET / HTTP/1.1\r\n\r\n"] {
            try channel.writeInbound(ByteBuffer(string: part))
        }
        XCTAssertEqual(held.writes.map { String(buffer: $0) }, [PlainHTTPOnTLSPort.answer])
        XCTAssertTrue(channel.isActive, "closed once the answer is written")
        held.release()
        XCTAssertFalse(channel.isActive)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// The two gauges as a scrape appends them, compared with Fixtures/golden/web-config.prom
    /// (which MetricCatalogueTests holds docs/metrics.md to). Regenerate with
    /// `CLOUDY_UPDATE_GOLDEN=1 swift test --filter WebAccessTests`.
    func testTheGaugesMatchTheirGoldenPage() throws {
        let (_, web) = try connection(users)
        var writer = ExpositionWriter(capacity: 1024)
        for family in web.addMetrics(to: MetricFamilies()).sorted() { writer.write(family, format: .prometheus) }
        try assertMatchesGolden(writer.bytes, golden: "web-config.prom")
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(writer.bytes))
        XCTAssertEqual(result.stdout + result.stderr, "")
    }
}

/// Holds every write, unwritten, until `release()`: a socket the client does not read.
final class HeldWrites: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    private(set) var writes: [ByteBuffer] = []
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        writes.append(unwrapOutboundIn(data))
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {}

    func release() {
        for promise in promises { promise.succeed() }
        promises = []
    }
}
