import Foundation
import XCTest

@testable import Cloudy

/// The real binary with `--web.config.file`, against real clients: the curl command
/// (`--cacert`, `--cert`/`--key`, `-u`) and Python's `ssl`. Certificates come from
/// `TestCertificates` (openssl, at test time). Bad input gets an error or a closed connection,
/// never a crash, and no password or hash reaches the log.
final class TLSEndToEndTests: FakeWeatherTestCase {
    static let password = "scrape ☂ pass"

    func config() -> String {
        """
        provider:
          url: \(fake.baseURL)
        refresh:
          interval: 1h
          timeout: 2s
        locations:
          - name: Berlin
            latitude: 52.52
            longitude: 13.41
        """
    }

    /// Starts the exporter with `web` as its web config (cert paths relative to the cert
    /// directory, where the file is written), waiting until it answers over TLS.
    func start(web: String, name: String = "web-\(UUID().uuidString).yml") throws -> (ExporterProcess, String) {
        let webFile = try TestCertificates.directory().appendingPathComponent(name).path
        try web.write(toFile: webFile, atomically: true, encoding: .utf8)
        let exporter = try ExporterProcess(config: config(), extraArguments: ["--web.config.file", webFile])
        try waitUntil("the exporter answers over TLS", timeout: 20, log: exporter.log) {
            guard exporter.process.isRunning else { throw Failure("exited:\n\(exporter.log)") }
            // Listening: curl gets past connecting (exit 7), whether or not it may in.
            return try curl(["-k", "https://127.0.0.1:\(exporter.port)/healthz"]).exit != 7
        }
        return (exporter, webFile)
    }

    /// Runs curl; `code` is the HTTP status it saw ("000" when there was no answer).
    func curl(_ arguments: [String]) throws -> (code: String, body: String, exit: Int32, stderr: String) {
        let out = try runProgram(
            "/usr/bin/curl", ["-sS", "--max-time", "5", "-o", "-", "-w", "\n%{http_code}"] + arguments)
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"), out.status, out.stderr)
    }

    func cert(_ name: String) throws -> String { try TestCertificates.path(name) }

    static let tls = """
        tls_server_config:
          cert_file: server.pem
          key_file: server.key

        """

    func testCurlOverTLSWithBasicAuth() throws {
        let hash = try TestCertificates.htpasswdHash(Self.password)
        let (exporter, _) = try start(
            web: Self.tls + "basic_auth_users:\n  prometheus: \"\(hash)\"\nauth_excluded_paths: [/healthz]\n")
        let url = "https://localhost:\(exporter.port)"
        let ca = try cert("ca.pem")
        XCTAssertEqual(try curl(["--cacert", ca, url + "/healthz"]).code, "200", "liveness is open")
        let refused = try curl(["--cacert", ca, "-D", "-", url + "/metrics"])
        XCTAssertEqual(refused.code, "401")
        XCTAssertTrue(refused.body.contains("WWW-Authenticate: Basic realm=\"cloudy_exporter\""), refused.body)
        XCTAssertEqual(try curl(["--cacert", ca, "-u", "prometheus:wrong", url + "/metrics"]).code, "401")
        XCTAssertEqual(try curl(["--cacert", ca, "-u", "nobody:\(Self.password)", url + "/"]).code, "401")
        XCTAssertEqual(try curl(["--cacert", ca, "-u", "prometheus", url + "/metrics"]).code, "401", "no password")
        for path in ["/metrics", "/", "/places/Berlin", "/cloudy.css", "/favicon.svg"] {
            let ok = try curl(["--cacert", ca, "-u", "prometheus:\(Self.password)", "--compressed", url + path])
            XCTAssertEqual(ok.code, "200", path + ok.stderr)
        }
        let page = try curl(["--cacert", ca, "-u", "prometheus:\(Self.password)", url + "/metrics"]).body
        XCTAssertTrue(page.contains("cloudy_exporter_web_config_last_reload_successful 1"), page)

        // The server's certificate is checked by the client: no --cacert, no connection.
        XCTAssertNotEqual(try curl([url + "/healthz"]).exit, 0)

        // Plain HTTP to the TLS port: 400 saying so, the process alive and still serving.
        let plain = try curl(["http://127.0.0.1:\(exporter.port)/metrics"])
        XCTAssertEqual(plain.code, "400")
        XCTAssertEqual(plain.body, "Client sent an HTTP request to an HTTPS server.\n")
        XCTAssertTrue(exporter.process.isRunning)
        XCTAssertEqual(try curl(["--cacert", ca, url + "/healthz"]).code, "200")

        // A 1 MB Authorization header: answered 4xx or closed, nothing more.
        let huge = "Authorization: Basic " + String(repeating: "QUFB", count: 262_144)
        let headerFile = exporter.directory.appendingPathComponent("huge-header").path
        try huge.write(toFile: headerFile, atomically: true, encoding: .utf8)
        let big = try curl(["--cacert", ca, "-H", "@" + headerFile, url + "/metrics"])
        XCTAssertTrue(["000", "400", "431"].contains(big.code), big.code)
        XCTAssertTrue(exporter.process.isRunning)

        let log = exporter.log
        for leak in [Self.password, hash, String(hash.dropFirst(7))] {
            XCTAssertFalse(log.contains(leak), "the log holds a secret:\n\(log)")
        }
    }

    func testPythonSSLWithMutualTLS() throws {
        let (exporter, _) = try start(
            web: Self.tls
                + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n  min_version: TLS13\n")
        let url = "https://127.0.0.1:\(exporter.port)"
        let ca = try cert("ca.pem")
        let ok = try curl([
            "--cacert", ca, "--cert", try cert("client.pem"), "--key", try cert("client.key"), url + "/metrics",
        ])
        XCTAssertEqual(ok.code, "200", ok.stderr)
        XCTAssertEqual(try curl(["--cacert", ca, url + "/healthz"]).code, "000", "no client certificate")
        for client in ["other-client", "expired-client"] {
            let refused = try curl([
                "--cacert", ca, "--cert", try cert("\(client).pem"), "--key", try cert("\(client).key"),
                url + "/healthz",
            ])
            XCTAssertEqual(refused.code, "000", client)
        }
        XCTAssertEqual(
            try curl([
                "--cacert", ca, "--tls-max", "1.2", "--cert", try cert("client.pem"), "--key", try cert("client.key"),
                url + "/healthz",
            ]).code, "000", "min_version TLS13")
        XCTAssertTrue(exporter.process.isRunning)

        let script = """
            import ssl, sys, http.client
            directory, port, client = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            context = ssl.create_default_context(cafile=f"{directory}/ca.pem")
            if client != "none":
                context.load_cert_chain(f"{directory}/{client}.pem", f"{directory}/{client}.key")
            try:
                connection = http.client.HTTPSConnection("localhost", port, context=context, timeout=5)
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                print(response.status, connection.sock.version(), response.read().decode().strip())
            except (ssl.SSLError, ConnectionError, OSError) as error:
                print("refused", type(error).__name__)
            """
        func python(_ client: String) throws -> String {
            let directory = try TestCertificates.directory().path
            return try runProgram("/usr/bin/python3", ["-c", script, directory, "\(exporter.port)", client]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try python("client"), "200 TLSv1.3 OK")
        XCTAssertTrue(try python("other-client").hasPrefix("refused"))
        XCTAssertTrue(try python("expired-client").hasPrefix("refused"))
        XCTAssertTrue(try python("none").hasPrefix("refused"))
        XCTAssertTrue(exporter.process.isRunning)
    }

    func testClientAllowedSANs() throws {
        let (exporter, _) = try start(
            web: Self.tls + "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: [scraper.example]\n")
        let url = "https://localhost:\(exporter.port)/healthz"
        let ca = try cert("ca.pem")
        // RequireAnyClientCert takes any certificate as sent, if it names an allowed SAN.
        XCTAssertEqual(
            try curl([
                "--cacert", ca, "--cert", try cert("other-client.pem"), "--key", try cert("other-client.key"), url,
            ]).code, "200")
        // The server's own certificate names localhost, not scraper.example: closed.
        XCTAssertEqual(
            try curl(["--cacert", ca, "--cert", try cert("server.pem"), "--key", try cert("server.key"), url]).code,
            "000")
        XCTAssertEqual(try curl(["--cacert", ca, url]).code, "000")
        XCTAssertTrue(exporter.process.isRunning)
        // Taken as the toolkit takes it, but said at start: the chain is never verified.
        XCTAssertTrue(
            exporter.log.contains("client_allowed_sans: with client_auth_type RequireAnyClientCert"), exporter.log)
    }

    /// The two policies that ask for a certificate without requiring one: VerifyClientCertIfGiven
    /// checks one that is sent, RequestClientCert takes it as sent.
    func testOptionalClientCertificates() throws {
        let ca = try cert("ca.pem")
        func get(_ exporter: ExporterProcess, _ client: String?) throws -> String {
            let identity = try client.map { ["--cert", try cert("\($0).pem"), "--key", try cert("\($0).key")] } ?? []
            return try curl(["--cacert", ca] + identity + ["https://localhost:\(exporter.port)/healthz"]).code
        }
        let (verifying, _) = try start(
            web: Self.tls + "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n")
        XCTAssertEqual(try get(verifying, nil), "200", "none sent: in")
        XCTAssertEqual(try get(verifying, "client"), "200")
        XCTAssertEqual(try get(verifying, "other-client"), "000", "sent, from another CA: out")
        XCTAssertEqual(try get(verifying, "expired-client"), "000")
        let (requesting, _) = try start(web: Self.tls + "  client_auth_type: RequestClientCert\n")
        XCTAssertEqual(try get(requesting, nil), "200")
        XCTAssertEqual(try get(requesting, "other-client"), "200", "taken as sent")
        XCTAssertTrue(verifying.process.isRunning && requesting.process.isRunning)
    }

    func testARotatedCertificateAppliesToNewConnections() throws {
        let directory = try TestCertificates.directory()
        let live = directory.appendingPathComponent("rotating-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        func install(_ name: String) throws {
            for suffix in ["pem", "key"] {
                let target = live.appendingPathComponent("live.\(suffix)")
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: directory.appendingPathComponent("\(name).\(suffix)"), to: target)
            }
        }
        try install("server")
        let (exporter, _) = try start(
            web: "tls_server_config:\n  cert_file: \(live.path)/live.pem\n  key_file: \(live.path)/live.key\n")
        func served() throws -> String {
            let script = "import ssl,sys; print(ssl.get_server_certificate(('127.0.0.1', int(sys.argv[1]))))"
            let pem = try runProgram("/usr/bin/python3", ["-c", script, "\(exporter.port)"]).stdout
            return pem.filter { !$0.isWhitespace }
        }
        func file(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8).filter { !$0.isWhitespace }
        }
        XCTAssertEqual(try served(), try file("server.pem"))
        try install("server2")
        try waitUntil("the new certificate is served", timeout: 10, log: exporter.log) {
            try served() == file("server2.pem")
        }

        // A broken certificate: the last good one stays, the gauge says 0.
        try "not a certificate".write(to: live.appendingPathComponent("live.pem"), atomically: true, encoding: .utf8)
        try waitUntil("the refusal is logged", timeout: 10, log: exporter.log) {
            _ = try served()  // a new connection is what makes the server look
            return exporter.log.contains("web config re-read refused")
        }
        XCTAssertEqual(try served(), try file("server2.pem"))
        let page = try curl(["-k", "https://127.0.0.1:\(exporter.port)/metrics"]).body
        XCTAssertTrue(page.contains("cloudy_exporter_web_config_last_reload_successful 0"), page)
        XCTAssertTrue(exporter.log.contains("tls_server_config.cert_file"), exporter.log)
    }

    func testTLSToAPlainPortIsRefusedAndServingGoesOn() throws {
        let exporter = try ExporterProcess(config: config())
        try exporter.waitFor("/healthz")
        let tls = try curl(["-k", "https://127.0.0.1:\(exporter.port)/healthz"])
        XCTAssertEqual(tls.code, "000")
        XCTAssertTrue(exporter.process.isRunning)
        XCTAssertEqual(try exporter.get("/healthz").status, 200)
        XCTAssertFalse(try exporter.get("/metrics").body.isEmpty)
        let page = String(decoding: try exporter.get("/metrics").body, as: UTF8.self)
        XCTAssertFalse(page.contains("web_config"), "no web config, no web config gauges")
    }

    func testABadWebConfigStopsStartUpAndConfigCheckReadsIt() throws {
        let directory = try TestCertificates.directory()
        let bad = directory.appendingPathComponent("bad-\(UUID().uuidString).yml").path
        try (Self.tls + "  max_version: TLS14\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let exporter = try ExporterProcess(config: config(), extraArguments: ["--web.config.file", bad])
        exporter.process.waitUntilExit()
        XCTAssertEqual(exporter.process.terminationStatus, 1)
        XCTAssertTrue(exporter.log.contains("tls_server_config.max_version"), exporter.log)

        let check = try runProgram(
            TestPaths.exporterBinary.path,
            ["--config.file", exporter.configFile.path, "--web.config.file", bad, "--config.check"])
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(
            check.stderr.contains("\(bad):4: tls_server_config.max_version: unknown TLS version"), check.stderr)

        let good = directory.appendingPathComponent("good-\(UUID().uuidString).yml").path
        try Self.tls.write(toFile: good, atomically: true, encoding: .utf8)
        let ok = try runProgram(
            TestPaths.exporterBinary.path,
            ["--config.file", exporter.configFile.path, "--web.config.file", good, "--config.check"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.contains("\(good): OK (TLS, client certificates: NoClientCert, no login)"), ok.stdout)
        XCTAssertEqual(ok.stderr, "")

        // A combination the toolkit takes but that verifies nothing: OK, with the warning on stderr.
        let unverified = directory.appendingPathComponent("sans-\(UUID().uuidString).yml").path
        try (Self.tls + "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: [scraper.example]\n")
            .write(toFile: unverified, atomically: true, encoding: .utf8)
        let warned = try runProgram(
            TestPaths.exporterBinary.path,
            ["--config.file", exporter.configFile.path, "--web.config.file", unverified, "--config.check"])
        XCTAssertEqual(warned.status, 0, warned.stderr)
        XCTAssertTrue(
            warned.stderr.contains(
                "\(unverified): warning: tls_server_config.client_allowed_sans: with client_auth_type RequireAnyClientCert"
            ),
            warned.stderr)
    }
}
