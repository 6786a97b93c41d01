import Foundation
import XCTest

@testable import Cloudy

/// `ZoneRules`: the system's compiled zone files read by Cloudy's own reader give the offsets
/// Foundation's `TimeZone` (ICU) gives, at every change of offset and between them, and a zone
/// the files do not have still comes from Foundation.
final class ZoneRulesTests: XCTestCase {
    let zoneinfo = "/usr/share/zoneinfo"  // Debian's tzdata, which scripts/install-deps installs

    /// Every zone Foundation knows that has a file: the same offset as Foundation on both sides
    /// of each change in the file from 2000 to 2037 and in its footer's years after that (Europe's
    /// last Sundays, the southern hemisphere's wrap over new year, Nuuk's changes at −1 h), and
    /// at noon every 9 days between. Offsets before 2000 are left out: ICU's copy of the rules
    /// and Debian's differ on some zones' early history.
    func testEveryZoneFileGivesFoundationsOffsets() throws {
        var compared = 0
        var mismatches: [String] = []
        for name in TimeZone.knownTimeZoneIdentifiers {
            guard let rules = ZoneRules(name: name, directory: zoneinfo), rules.isFromFile,
                let foundation = TimeZone(identifier: name),
                let file = FileManager.default.contents(atPath: "\(zoneinfo)/\(name)"),
                let tzif = TZif([UInt8](file))
            else { continue }
            var moments = tzif.transitions.filter { $0 >= 946_684_800 }.flatMap { [$0 - 1, $0] }
            if let daylight = tzif.footer?.daylight, let standard = tzif.footer?.standard {
                for year in 2038...2060 {
                    let start = Int64(daylight.start.seconds(in: year) - standard)
                    let end = Int64(daylight.end.seconds(in: year) - daylight.offset)
                    moments += [start - 1, start, end - 1, end]
                }
            }
            moments += stride(from: Int64(946_728_000), to: 2_871_763_200, by: 9 * 86_400)
            for moment in moments {
                let expected = foundation.secondsFromGMT(for: Date(timeIntervalSince1970: Double(moment)))
                let offset = rules.utcOffset(at: Double(moment))
                compared += 1
                if offset != expected { mismatches.append("\(name) at \(moment): \(offset), Foundation \(expected)") }
            }
        }
        XCTAssertGreaterThan(compared, 100_000)
        XCTAssertEqual(mismatches.prefix(20), [], "\(mismatches.count) mismatches")
    }

    /// A zone the directory has no file for, or a file the reader does not take, comes from
    /// Foundation with the same offsets; a name neither knows is none; names that are not zones
    /// (a path out of the directory, the `posix/` copies, a table) are never read as files.
    func testZonesWithoutAReadableFileComeFromFoundation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zones-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let berlin = try Data(contentsOf: URL(fileURLWithPath: "\(zoneinfo)/Europe/Berlin"))
        try berlin.prefix(300).write(to: directory.appendingPathComponent("Europe_Cut"))
        try Data("# tzdb data\n".utf8).write(to: directory.appendingPathComponent("zone.tab"))
        try berlin.write(to: directory.appendingPathComponent("Berlin_Copy"))
        let summer = 1_781_524_800.0  // 2026-06-15 12:00 UTC

        let copy = try XCTUnwrap(ZoneRules(name: "Berlin_Copy", directory: directory.path))
        XCTAssertTrue(copy.isFromFile)
        XCTAssertEqual(copy.utcOffset(at: summer), 7200)
        let missing = try XCTUnwrap(ZoneRules(name: "Europe/Berlin", directory: directory.path))
        XCTAssertFalse(missing.isFromFile)
        XCTAssertEqual(missing.utcOffset(at: summer), 7200)
        XCTAssertNil(ZoneRules(name: "Europe_Cut", directory: directory.path))
        XCTAssertNil(ZoneRules(name: "zone.tab", directory: directory.path))
        XCTAssertNil(ZoneRules(name: "Mars/Olympus_Mons", directory: zoneinfo))
        for name in [
            "../zoneinfo/Europe/Berlin", "/usr/share/zoneinfo/Europe/Berlin", "posix/Europe/Berlin",
            "right/Europe/Berlin", "posixrules", "Europe", "Europe//Berlin", "./Europe/Berlin", "Europe/./Berlin",
            "Europe/Berlin/", "",
        ] {
            XCTAssertFalse(ZoneRules(name: name, directory: zoneinfo)?.isFromFile ?? false, name)
        }
        XCTAssertTrue(try XCTUnwrap(ZoneRules.named("Asia/Kathmandu")).isFromFile)
        XCTAssertEqual(ZoneRules.named("Asia/Kathmandu")?.utcOffset(at: summer), 20_700)
        XCTAssertTrue(Place.isTimeZoneName("America/Argentina/Buenos_Aires"))
        for name in ["posix/Europe/Berlin", "Europe//Berlin", "Europe/./Berlin", "Europe/Berlin/"] {
            XCTAssertFalse(Place.isTimeZoneName(name), "a spelling upstreams refuse: \(name)")
        }
    }

    /// A file without transitions (as `zic -b slim` writes a zone that has always followed one
    /// rule) is all footer; a version 1 file is its 32-bit data alone.
    func testFooterAloneAndVersionOneFiles() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        let slim = try XCTUnwrap(TZif(Self.file(version: 2, transitions: [], footer: "CET-1CEST,M3.5.0,M10.5.0/3")))
        for moment in stride(from: Int64(1_735_689_600), to: 1_893_456_000, by: 3 * 3600) {
            XCTAssertEqual(
                slim.utcOffset(at: moment), berlin.secondsFromGMT(for: Date(timeIntervalSince1970: Double(moment))))
        }
        let old = try XCTUnwrap(TZif(Self.file(version: 1, transitions: [(0, 3600), (1000, 7200)], footer: nil)))
        XCTAssertEqual([-1, 0, 999, 1000, 5_000_000_000].map { old.utcOffset(at: $0) }, [0, 3600, 3600, 7200, 7200])
        XCTAssertNil(TZif(Self.file(version: 2, transitions: [], footer: "CET-1CEST,M13.5.0,M10.5.0/3")))
        XCTAssertNil(TZif(Self.file(version: 2, transitions: [(1000, 3600), (0, 0)], footer: "")))
        XCTAssertNil(TZif(Array("TZif2".utf8)))
    }

    /// Footers as the tz database writes them, and text that is not one.
    func testPOSIXRules() throws {
        let kathmandu = try XCTUnwrap(POSIXZoneRule("<+0545>-5:45"))
        XCTAssertEqual(kathmandu.standard, 20_700)
        XCTAssertNil(kathmandu.daylight)
        let sydney = try XCTUnwrap(POSIXZoneRule("AEST-10AEDT,M10.1.0,M4.1.0/3"))
        XCTAssertEqual(sydney.daylight?.offset, 39_600)
        XCTAssertEqual(sydney.daylight?.end, .init(day: .weekday(month: 4, week: 1, weekday: 0), time: 10_800))
        XCTAssertEqual(sydney.utcOffset(at: 1_767_225_600), 39_600)  // 2026-01-01: summer
        XCTAssertEqual(sydney.utcOffset(at: 1_781_524_800), 36_000)  // 2026-06-15: winter
        let nuuk = try XCTUnwrap(POSIXZoneRule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0"))
        XCTAssertEqual(nuuk.daylight?.start.time, -3600)
        // 2027-03-27 23:00 at −2 h, the Saturday before the last Sunday: 2027-03-28 01:00 UTC.
        XCTAssertEqual(nuuk.utcOffset(at: 1_806_195_600 - 1), -7200)
        XCTAssertEqual(nuuk.utcOffset(at: 1_806_195_600), -3600)
        let allYear = try XCTUnwrap(POSIXZoneRule("EST5EDT,0/0,J365/25"))
        XCTAssertEqual([1_767_225_600, 1_798_761_599].map { allYear.utcOffset(at: $0) }, [-14_400, -14_400])
        let julian = try XCTUnwrap(POSIXZoneRule("XST3XDT2,J60,300/1:30:15"))
        XCTAssertEqual(julian.daylight?.start, .init(day: .noLeapDay(60), time: 7200))
        XCTAssertEqual(julian.daylight?.end, .init(day: .dayOfYear(300), time: 5415))
        // J60 is March 1 in a leap year too (2028-03-01 02:00 at −3 h is 05:00 UTC).
        XCTAssertEqual(julian.utcOffset(at: 1_835_499_600 - 1), -10_800)
        XCTAssertEqual(julian.utcOffset(at: 1_835_499_600), -7200)
        for text in [
            "", "CET", "CE-1", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0",
            "CET-1CEST,J0,J300", "CET-168", "<+05", "CET-1CEST,M3.5.0,M10.5.0/3 ",
        ] {
            XCTAssertNil(POSIXZoneRule(text), text)
        }
    }

    /// A TZif file: `transitions` as (moment, offset after it), the offset before them 0.
    static func file(version: Int, transitions: [(Int64, Int32)], footer: String?) -> [UInt8] {
        let offsets: [Int32] = [0] + transitions.map(\.1)
        func block(timeSize: Int) -> [UInt8] {
            var bytes = Array("TZif".utf8) + [version == 1 ? 0 : UInt8(ascii: "0") + UInt8(version)]
            bytes += [UInt8](repeating: 0, count: 15)
            for count in [0, 0, 0, transitions.count, offsets.count, 4] { bytes += bigEndian(Int64(count), size: 4) }
            for (moment, _) in transitions { bytes += bigEndian(moment, size: timeSize) }
            bytes += transitions.indices.map { UInt8($0 + 1) }
            for offset in offsets { bytes += bigEndian(Int64(offset), size: 4) + [0, 0] }
            return bytes + Array("UTC\0".utf8)
        }
        func bigEndian(_ value: Int64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        guard version >= 2 else { return block(timeSize: 4) }
        return block(timeSize: 4) + block(timeSize: 8) + Array("\n\(footer ?? "")\n".utf8)
    }
}
