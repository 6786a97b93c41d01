import Foundation
import XCTest

@testable import Cloudy

/// A log line stays one line that reads as written, whatever an upstream's text holds: line
/// separators, NEL, ESC, a direction override are escaped, and JSON lines still decode to the
/// text itself.
final class LogLineTests: XCTestCase {
    let hostile = "HTTP 503: busy\u{2028}level=error msg=\u{85}fake\u{1B}[2J \u{202E}txet\u{E0001} — naïve 🌧"

    func testJSONLinesEscapeWhatATerminalWouldActOnAndDecodeToTheText() throws {
        let line = LineLogHandler.json([("msg", "place refresh failed"), ("reason", hostile)])
        for raw: Unicode.Scalar in ["\u{2028}", "\u{85}", "\u{1B}", "\u{202E}", "\u{E0001}", "\n"] {
            XCTAssertFalse(line.unicodeScalars.contains(raw), "U+\(String(raw.value, radix: 16)) raw in \(line)")
        }
        XCTAssertTrue(line.contains(#"\u2028"#) && line.contains(#"\u0085"#) && line.contains(#"\udb40\udc01"#), line)
        let decoded = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        XCTAssertEqual(decoded["reason"], hostile)
        XCTAssertTrue(line.contains("naïve 🌧"), "what is shown stays as it is")
    }

    func testLogfmtQuotesAndEscapesThem() {
        let line = LineLogHandler.logfmt([("msg", "x"), ("reason", hostile), ("zone", "Europe/Berlin\u{200B}")])
        XCTAssertEqual(line.split(whereSeparator: \.isNewline).count, 1, line)
        XCTAssertFalse(line.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{200B}" || $0 == "\u{1B}" }, line)
        XCTAssertTrue(line.hasSuffix(#" zone="Europe/Berlin\u200b""#), line)
    }
}
