import Foundation
import XCTest

@testable import Cloudy

/// The binary's command line as docs/configuration.md gives it: what `--version` prints, and
/// that a malformed flag exits 64 naming the flag, before anything starts.
final class CommandLineTests: XCTestCase {
    func testVersionPrintsVersionRevisionAndSwift() throws {
        let run = try runProgram(TestPaths.exporterBinary.path, ["--version"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, run.stdout)
        XCTAssertEqual(
            lines.first.map(String.init),
            "cloudy_exporter, version \(BuildInfo.version) (revision: \(BuildInfo.revision))")
        let swift = try XCTUnwrap(lines.last)
        XCTAssertTrue(swift.hasPrefix("  swift version: 6."), run.stdout)
    }

    func testAMalformedFlagExits64NamingIt() throws {
        for (arguments, named) in [
            (["--web.listen-address", "nonsense"], "--web.listen-address"), (["--shard=3/3"], "--shard"),
        ] {
            let run = try runProgram(TestPaths.exporterBinary.path, arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): a malformed command line exits 64")
            // The error line itself: the usage line after it lists every flag.
            let error = run.stderr.split(separator: "\n").first { $0.hasPrefix("Error: ") }
            XCTAssertTrue(error?.contains(named) == true, run.stderr)
            XCTAssertFalse(run.stderr.contains("listening"), "nothing started")
        }
    }
}
