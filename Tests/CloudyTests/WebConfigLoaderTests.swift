import Foundation
import NIOSSL
import XCTest

@testable import Cloudy

/// `--web.config.file` read strictly: every mistake is one message naming the field; nothing
/// secret in any message.
final class WebConfigLoaderTests: XCTestCase {
    func parse(_ yaml: String) throws -> WebConfig {
        try WebConfigLoader.parse(yaml: yaml, file: "web.yml", directory: TestCertificates.directory().path)
    }

    func assertRefused(
        _ yaml: String, field: String, reason: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let directory = try TestCertificates.directory().path
        do {
            let config = try WebConfigLoader.parse(yaml: yaml, file: "web.yml", directory: directory)
            XCTFail("accepted: \(config.summary)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.field, field, error.description, file: file, line: line)
            XCTAssertTrue(error.reason.contains(reason), error.description, file: file, line: line)
            XCTAssertTrue(error.description.hasPrefix("web.yml"), error.description, file: file, line: line)
        }
    }

    static let tls = """
        tls_server_config:
          cert_file: server.pem
          key_file: server.key

        """

    func testAFullToolkitConfigLoads() throws {
        let hash = try TestCertificates.htpasswdHash("secret")
        let config = try parse(
            """
            tls_server_config:
              cert_file: server.pem
              key_file: server.key
              client_auth_type: RequireAndVerifyClientCert
              client_ca_file: ca.pem
              client_allowed_sans: [scraper.example]
              min_version: TLS12
              max_version: TLS13
              cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
              curve_preferences: [X25519, CurveP256]
              prefer_server_cipher_suites: true
            http_server_config:
              http2: false
              headers:
                X-Frame-Options: deny
                Strict-Transport-Security: max-age=31536000
            basic_auth_users:
              prometheus: \(hash)
            rate_limit:
              interval: 100ms
              burst: 20
            auth_excluded_paths: [/healthz, /-/healthy]
            """)
        let tls = try XCTUnwrap(config.tls)
        XCTAssertEqual(tls.clientAuth, .requireAndVerifyClientCert)
        XCTAssertEqual(tls.clientCAs.count, 1)
        XCTAssertEqual(tls.clientAllowedSANs, ["scraper.example"])
        XCTAssertEqual(tls.cipherSuites, [.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256])
        XCTAssertEqual(tls.curves, [.x25519, .secp256r1])
        XCTAssertEqual(
            tls.files.map { URL(fileURLWithPath: $0).lastPathComponent }, ["server.pem", "server.key", "ca.pem"])
        XCTAssertEqual(config.headers.map(\.0), ["X-Frame-Options", "Strict-Transport-Security"])
        XCTAssertEqual(config.users, ["prometheus": hash])
        XCTAssertEqual(config.rateLimit, .init(interval: 0.1, burst: 20))
        XCTAssertEqual(config.authExcludedPaths, ["/healthz", "/-/healthy"])
        XCTAssertFalse(config.summary.contains(hash))
    }

    func testInlineCertificateKeyAndClientCA() throws {
        let directory = try TestCertificates.directory()
        func indented(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                .split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        }
        let config = try parse(
            """
            tls_server_config:
              cert: |
            \(try indented("server.pem"))
              key: |
            \(try indented("server.key"))
              client_ca: |
            \(try indented("ca.pem"))
              client_auth_type: VerifyClientCertIfGiven
            """)
        XCTAssertEqual(config.tls?.clientAuth, .verifyClientCertIfGiven)
        XCTAssertEqual(config.tls?.files, [])
    }

    /// The context built to check the key is the one connections use: built once per read.
    func testTheTLSContextIsBuiltOncePerRead() throws {
        let settings = try XCTUnwrap(try parse(Self.tls).tls)
        let checked = try XCTUnwrap(settings.context)
        XCTAssertTrue(try ServerTLS(settings).context === checked)
    }

    func testEveryClientAuthTypeIsAccepted() throws {
        for auth in WebConfig.ClientAuth.allCases {
            let ca = auth.verifiesCertificate ? "  client_ca_file: ca.pem\n" : ""
            let config = try parse(Self.tls + "  client_auth_type: \(auth.rawValue)\n" + ca)
            XCTAssertEqual(config.tls?.clientAuth, auth)
            XCTAssertNoThrow(try ServerTLS(XCTUnwrap(config.tls)))
        }
    }

    func testAnEmptyFileOrNoTLSKeysServesPlainHTTP() throws {
        XCTAssertNil(try parse("").tls)
        XCTAssertNil(try parse("tls_server_config: {}\n").tls)
    }

    func testMistakesNameTheirField() throws {
        try assertRefused("tls_config: {}\n", field: "tls_config", reason: "unknown key")
        try assertRefused(Self.tls + "  cert_path: x\n", field: "tls_server_config.cert_path", reason: "unknown key")
        try assertRefused(
            "tls_server_config:\n  cert_file: missing.pem\n  key_file: server.key\n",
            field: "tls_server_config.cert_file", reason: "cannot read")
        try assertRefused(
            "tls_server_config:\n  cert_file: server.pem\n", field: "tls_server_config.key_file", reason: "required")
        try assertRefused(
            "tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n",
            field: "tls_server_config.key_file", reason: "does not match")
        try assertRefused(
            "tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n",
            field: "tls_server_config.cert_file", reason: "PEM")
        try assertRefused(
            Self.tls + "  min_version: TLS14\n", field: "tls_server_config.min_version", reason: "unknown TLS version")
        try assertRefused(
            Self.tls + "  min_version: TLS10\n", field: "tls_server_config.min_version", reason: "not offered")
        try assertRefused(
            Self.tls + "  min_version: TLS13\n  max_version: TLS12\n", field: "tls_server_config.min_version",
            reason: "above")
        try assertRefused(
            Self.tls + "  client_auth_type: RequireSomething\n", field: "tls_server_config.client_auth_type",
            reason: "unknown value")
        try assertRefused(
            Self.tls + "  client_auth_type: RequireAndVerifyClientCert\n", field: "tls_server_config.client_auth_type",
            reason: "needs client_ca_file")
        try assertRefused(
            Self.tls + "  client_ca_file: ca.pem\n", field: "tls_server_config.client_ca_file",
            reason: "client_auth_type")
        try assertRefused(
            Self.tls
                + "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n  client_allowed_sans: [a]\n",
            field: "tls_server_config.client_allowed_sans", reason: "RequireAnyClientCert")
        try assertRefused(
            Self.tls + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", field: "tls_server_config.cipher_suites",
            reason: "TLS_RSA_WITH_RC4_128_SHA")
        try assertRefused(
            Self.tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", field: "tls_server_config.cipher_suites",
            reason: "no TLS 1.2 suite")
        try assertRefused(
            Self.tls + "  curve_preferences: [CurveP1024]\n", field: "tls_server_config.curve_preferences",
            reason: "unknown curve")
        try assertRefused(
            "http_server_config:\n  headers:\n    Content-Type: text/html\n",
            field: "http_server_config.headers.Content-Type", reason: "cannot be configured")
        try assertRefused(
            "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
            field: "http_server_config.headers.X-Frame-Options", reason: "deny, sameorigin")
        // The server does not validate response headers again (HTTPServer.configureConnection).
        try assertRefused(
            "http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nSet-Cookie: x\"\n",
            field: "http_server_config.headers.Content-Security-Policy", reason: "control character")
        for escape in ["\\u0085", "\\u2028", "\\u009B"] {  // NEL, line separator, CSI: went out as raw bytes
            try assertRefused(
                "http_server_config:\n  headers:\n    Strict-Transport-Security: \"max-age=1\(escape)x\"\n",
                field: "http_server_config.headers.Strict-Transport-Security", reason: "control character")
        }
        try assertRefused("rate_limit:\n  burst: 5\n", field: "rate_limit.interval", reason: "required")
        try assertRefused("rate_limit:\n  interval: 1s\n  burst: -1\n", field: "rate_limit.burst", reason: "between")
        try assertRefused(
            "rate_limit:\n  interval: soon\n  burst: 1\n", field: "rate_limit.interval", reason: "duration")
    }

    func testABadHashIsNamedButNeverShown() throws {
        let notAHash = "hunter2-in-clear"
        try assertRefused(
            "basic_auth_users:\n  alice: \(notAHash)\n", field: "basic_auth_users.alice", reason: "bcrypt")
        do {
            _ = try parse("basic_auth_users:\n  alice: \(notAHash)\n")
        } catch {
            XCTAssertFalse("\(error)".contains(notAHash), "\(error)")
        }
        let wrongCost = "$2b$99$" + String(repeating: "a", count: 53)
        try assertRefused(
            "basic_auth_users:\n  alice: \"\(wrongCost)\"\n", field: "basic_auth_users.alice", reason: "cost")
        // Well-formed at any cost bcrypt allows, as in the toolkit (ToolkitVerdictTests: the warning).
        let valid = try TestCertificates.htpasswdHash("secret")
        for cost in [16, 31] {
            XCTAssertEqual(
                try parse("basic_auth_users:\n  alice: \"\(Bcrypt.withCost(valid, cost))\"\n").users.count, 1)
        }
        let md5 = "$1$abcdefgh$" + String(repeating: "a", count: 22)
        try assertRefused("basic_auth_users:\n  alice: \"\(md5)\"\n", field: "basic_auth_users.alice", reason: "bcrypt")
    }

    func testOnlyLivenessCanBeExcludedFromTheLogin() throws {
        let hash = try TestCertificates.htpasswdHash("secret")
        let users = "basic_auth_users:\n  alice: \(hash)\n"
        for path in ["/metrics", "/", "/readyz", "/-/ready", "/-/reload", "/places/Berlin", "/healthz/"] {
            try assertRefused(users + "auth_excluded_paths: [\(path)]\n", field: "auth_excluded_paths", reason: "only")
        }
        try assertRefused(
            "auth_excluded_paths: [/healthz]\n", field: "auth_excluded_paths", reason: "without basic_auth_users")
        XCTAssertEqual(try parse(users + "auth_excluded_paths: [/healthz]\n").authExcludedPaths, ["/healthz"])
    }

    /// Broken YAML names the file and line as `cloudy.yml`'s errors do.
    func testBrokenYAMLNamesTheLine() {
        XCTAssertThrowsError(try WebConfigLoader.parse(yaml: "basic_auth_users:\n  a: [\n", file: "w.yml")) { error in
            XCTAssertTrue("\(error)".hasPrefix("w.yml:3: invalid YAML: "), "\(error)")
        }
        XCTAssertThrowsError(try WebConfigLoader.parse(yaml: "basic_auth_users:\n  a: x\n  a: y\n", file: "w.yml")) {
            XCTAssertEqual("\($0)", "w.yml:3: basic_auth_users.a: duplicate key", "the line of the second")
        }
    }

    func testAMissingFileIsAnError() {
        XCTAssertThrowsError(try WebConfigLoader.load(file: "/nonexistent/web.yml")) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.reason, "cannot read the web config file: No such file or directory")
        }
    }
}
