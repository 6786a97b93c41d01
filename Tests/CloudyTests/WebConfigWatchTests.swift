import Foundation
import XCTest

@testable import Cloudy

/// Which files a web config's re-reads watch: a certificate the new config names before it is in
/// place is read once it is there, without touching the web config again.
final class WebConfigWatchTests: WebConfigTestCase {
    func tls(_ directory: String, _ name: String) -> String {
        "tls_server_config:\n  cert_file: \(directory)/\(name).pem\n  key_file: \(directory)/\(name).key\n"
    }

    /// One look a second later, and the re-reads it started (0 or 1).
    func look(_ web: WebConfigReloader) -> Int {
        clock.advance(by: 1)
        _ = web.current()
        return rereads.run()
    }

    /// A reloader started on the test certificates, and an empty directory for the next ones.
    func startOnTheTestCertificates() throws -> (WebConfigReloader, certificates: URL, later: URL) {
        let certificates = try TestCertificates.directory()
        try tls(certificates.path, "server").write(to: webFile, atomically: true, encoding: .utf8)
        let web = try WebConfigReloader(path: webFile.path, clock: clock, logger: log.logger, offload: rereads.offload)
        let later = directory.appendingPathComponent("later")
        try FileManager.default.createDirectory(at: later, withIntermediateDirectories: true)
        return (web, certificates, later)
    }

    func testFilesNamedBeforeTheyAreThereAreReadOnceTheyAre() throws {
        let (web, certificates, later) = try startOnTheTestCertificates()
        try tls(later.path, "live").write(to: webFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(look(web), 1)
        XCTAssertEqual(gauge(web), 0, "live.pem is not there yet")
        XCTAssertEqual(look(web), 0, "nothing changed: not read again")

        func install(_ suffix: String) throws {
            try FileManager.default.copyItem(
                at: certificates.appendingPathComponent("server2.\(suffix)"),
                to: later.appendingPathComponent("live.\(suffix)"))
        }
        try install("pem")
        XCTAssertEqual(look(web), 1, "the certificate is there")
        XCTAssertEqual(gauge(web), 0, "live.key is not")
        XCTAssertEqual(look(web), 0)
        try install("key")
        XCTAssertEqual(look(web), 1, "the key is there")
        XCTAssertEqual(gauge(web), 1)
        XCTAssertEqual(web.current().config.tls?.files, ["\(later.path)/live.pem", "\(later.path)/live.key"])
        XCTAssertEqual(log.entries(containing: "web config re-read refused").count, 2)
    }

    /// A certificate caught half copied: refused, then read again once it is whole. The first
    /// look after the refusal reads once more (the files the refused config names had no stamp
    /// yet), and says so once more; then nothing until a file changes.
    func testAHalfCopiedCertificateIsReadOnceItIsWhole() throws {
        let (web, certificates, later) = try startOnTheTestCertificates()
        let whole = try Data(contentsOf: certificates.appendingPathComponent("server2.pem"))
        try whole.prefix(100).write(to: later.appendingPathComponent("live.pem"))
        try FileManager.default.copyItem(
            at: certificates.appendingPathComponent("server2.key"), to: later.appendingPathComponent("live.key"))
        try tls(later.path, "live").write(to: webFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(look(web), 1)
        XCTAssertEqual(gauge(web), 0, "not PEM yet")
        XCTAssertEqual(look(web), 1, "once more, now that its files are watched")
        XCTAssertEqual(look(web), 0)
        XCTAssertEqual(log.entries(containing: "web config re-read refused").count, 2)
        try whole.write(to: later.appendingPathComponent("live.pem"))
        XCTAssertEqual(look(web), 1)
        XCTAssertEqual(gauge(web), 1)
    }
}
