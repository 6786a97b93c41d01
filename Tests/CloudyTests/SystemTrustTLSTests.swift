import Foundation
import XCTest

@testable import Cloudy

/// Issue 23 on the real binary: `client_auth_type: VerifyClientCertIfGiven` without a client CA,
/// as the toolkit takes it. A client without a certificate is served; one whose certificate does
/// not chain to the system's trust store (the test CA is not in it) is refused in the handshake,
/// by curl and by Python's `ssl`. The warnings come once in the log and in `--config.check`.
extension TLSEndToEndTests {
    func testVerifyClientCertIfGivenWithoutACAChecksAgainstTheSystemTrustStore() throws {
        let (exporter, _) = try start(web: Self.tls + "  client_auth_type: VerifyClientCertIfGiven\n")
        let ca = try cert("ca.pem")
        let url = "https://localhost:\(exporter.port)/healthz"
        XCTAssertEqual(try curl(["--cacert", ca, url]).code, "200", "no certificate: served")
        for client in ["client", "other-client"] {
            let refused = try curl([
                "--cacert", ca, "--cert", try cert("\(client).pem"), "--key", cert("\(client).key"), url,
            ])
            XCTAssertEqual(refused.code, "000", "\(client): not from a CA the system trusts")
            XCTAssertTrue(refused.stderr.lowercased().contains("alert"), "refused by TLS: \(refused.stderr)")
        }

        let script = """
            import ssl, sys, http.client
            port, client = int(sys.argv[1]), sys.argv[2]
            context = ssl.create_default_context(cafile=sys.argv[3] + "/ca.pem")
            if client != "none":
                context.load_cert_chain(f"{sys.argv[3]}/{client}.pem", f"{sys.argv[3]}/{client}.key")
            try:
                connection = http.client.HTTPSConnection("localhost", port, context=context, timeout=5)
                connection.request("GET", "/healthz")
                print(connection.getresponse().status)
            except ssl.SSLError as error:
                print("alert", error.reason)
            """
        func python(_ client: String) throws -> String {
            let directory = try TestCertificates.directory().path
            return try runProgram("/usr/bin/python3", ["-c", script, "\(exporter.port)", client, directory]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try python("none"), "200")
        let refused = try python("client")
        XCTAssertTrue(refused.hasPrefix("alert") && refused.contains("ALERT"), refused)
        XCTAssertTrue(exporter.process.isRunning)
        let warning = "tls_server_config.client_auth_type: VerifyClientCertIfGiven without client_ca_file"
        XCTAssertEqual(exporter.log.components(separatedBy: warning).count - 1, 1, "once:\n\(exporter.log)")
    }

    /// All three toolkit-accepted configs Cloudy advises against, in one file: OK, exit 0, one
    /// warning each on stderr, the bcrypt one with the CPU time measured by this run.
    func testConfigCheckSaysWhyOnceForEachConfigTheToolkitAccepts() throws {
        let directory = try TestCertificates.directory()
        let configFile = directory.appendingPathComponent("cloudy-\(UUID().uuidString).yml")
        try config().write(to: configFile, atomically: true, encoding: .utf8)
        let web = directory.appendingPathComponent("toolkit-\(UUID().uuidString).yml").path
        let cost18 = "$2b$18$m3o36VhLGPSeRJwClvsjHe0H52u2NjLtJble2h468ZbdsLe4KDiam"
        try
            (Self.tls + "  client_auth_type: VerifyClientCertIfGiven\n"
            + "basic_auth_users:\n  slow: \"\(cost18)\"\nrate_limit:\n  interval: 1s\n  burst: 0\n")
            .write(toFile: web, atomically: true, encoding: .utf8)
        let check = try runProgram(
            TestPaths.exporterBinary.path,
            ["--config.file", configFile.path, "--web.config.file", web, "--config.check"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(
            check.stdout.contains(
                "\(web): OK (TLS, client certificates: VerifyClientCertIfGiven, 1 basic-auth user, rate limit 0 per 1s)"
            ),
            check.stdout)
        let lines = check.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, check.stderr)
        for field in ["tls_server_config.client_auth_type", "basic_auth_users.slow", "rate_limit.burst"] {
            XCTAssertEqual(lines.filter { $0.hasPrefix("\(web): warning: \(field): ") }.count, 1, check.stderr)
        }
        // "about N s of CPU here": a number this machine produced, in bcrypt's range for cost 18.
        let costly = try XCTUnwrap(lines.first { $0.contains("basic_auth_users.slow") })
        let seconds = try XCTUnwrap(
            costly.components(separatedBy: "costs about ").last?.split(separator: " ").first.flatMap { Double($0) })
        XCTAssertTrue((0.5...600).contains(seconds), costly)
    }
}
