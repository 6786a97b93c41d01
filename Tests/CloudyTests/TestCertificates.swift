import Foundation
import XCTest

/// Certificates for the TLS tests, made by Debian's `openssl` through
/// Tests/Support/make-test-certificates (nothing is checked in): a CA, a server certificate
/// for localhost and 127.0.0.1, a client certificate from the CA, one from another CA, an
/// expired one, and a second server certificate for rotation.
///
/// The script runs once per day and version of itself (19 `openssl` runs, ~3 s of CPU a suite
/// when every test process made its own), into .build/test-certificates/; each test process
/// copies that set into a directory of its own, where its tests write web configs beside the
/// certificates, and which is removed when the process exits (`swift test --parallel` runs a
/// process per test case: ~1,500 directories had piled up in /tmp here).
enum TestCertificates {
    private static let location = FileManager.default.temporaryDirectory
        .appendingPathComponent("cloudy-certs-\(UUID().uuidString)")

    private static let made: Result<URL, Error> = Result {
        let kept = try keptSet()
        atexit { try? FileManager.default.removeItem(at: TestCertificates.location) }
        try FileManager.default.copyItem(at: kept, to: location)
        return location
    }

    /// The set in .build/test-certificates/, made now if no process has made it yet. Processes
    /// that start together may each make one: each makes it under a name of its own and renames it
    /// into place, which only the first rename does (a directory is never renamed onto one that
    /// has files), so a set is there whole or not at all.
    private static func keptSet() throws -> URL {
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Support/make-test-certificates")
        // FNV-1a of the script: another recipe makes another set.
        let recipe = try Data(contentsOf: script).reduce(UInt64(0xcbf2_9ce4_8422_2325)) {
            ($0 ^ UInt64($1)) &* 0x100_0000_01b3
        }
        let day = Int(Date().timeIntervalSince1970 / 86_400)  // certificates a day old at most
        let sets = TestPaths.packageRoot.appendingPathComponent(".build/test-certificates")
        let kept = sets.appendingPathComponent("\(String(recipe, radix: 16))-\(day)")
        if FileManager.default.fileExists(atPath: kept.path) { return kept }
        let making = sets.appendingPathComponent("making-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: sets, withIntermediateDirectories: true)
        let result = try runProgram("/bin/bash", [script.path, making.path])
        guard result.status == 0 else {
            try? FileManager.default.removeItem(at: making)
            throw Failure(
                "make-test-certificates failed (openssl installed? scripts/install-deps --test):\n\(result.stderr)")
        }
        if rename(making.path, kept.path) != 0 { try? FileManager.default.removeItem(at: making) }
        return kept
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
