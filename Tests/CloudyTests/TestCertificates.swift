import Foundation
import XCTest

/// Certificates for the TLS tests, made once per test process by Debian's `openssl` through
/// Tests/Support/make-test-certificates (nothing is checked in): a CA, a server certificate
/// for localhost and 127.0.0.1, a client certificate from the CA, one from another CA, an
/// expired one, and a second server certificate for rotation. The directory is removed when
/// the process exits (`swift test --parallel` runs a process per test case: ~1,500 of them had
/// piled up in /tmp here).
enum TestCertificates {
    private static let location = FileManager.default.temporaryDirectory
        .appendingPathComponent("cloudy-certs-\(UUID().uuidString)")

    private static let made: Result<URL, Error> = Result {
        let directory = location
        atexit { try? FileManager.default.removeItem(at: TestCertificates.location) }
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Support/make-test-certificates").path
        let result = try runProgram("/bin/bash", [script, directory.path])
        guard result.status == 0 else {
            throw Failure(
                "make-test-certificates failed (openssl installed? scripts/install-deps --test):\n\(result.stderr)")
        }
        return directory
    }

    static func directory() throws -> URL { try made.get() }

    /// The path of one of the files, e.g. `path("server.pem")`.
    static func path(_ name: String) throws -> String {
        try directory().appendingPathComponent(name).path
    }

    /// A bcrypt hash of `password` made by Apache's htpasswd (the recipe docs/web-config.md
    /// gives), at the cheapest cost so tests stay quick.
    static func htpasswdHash(_ password: String, cost: Int = 4) throws -> String {
        try htpasswdHash(bytes: Array(password.utf8), cost: cost)
    }

    static func htpasswdHash(bytes: [UInt8], cost: Int = 4) throws -> String {
        let result = try runProgram("/usr/bin/htpasswd", ["-niBC", "\(cost)", "user"], input: Data(bytes))
        guard result.status == 0, let colon = result.stdout.firstIndex(of: ":") else {
            throw Failure("htpasswd failed (apache2-utils installed? scripts/install-deps --test): \(result.stderr)")
        }
        return String(result.stdout[result.stdout.index(after: colon)...]).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }
}
