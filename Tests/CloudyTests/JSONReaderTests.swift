import Foundation
import XCTest

@testable import Cloudy

/// The reader the Open-Meteo answers go through: the numbers it computes itself are the Doubles
/// `strtod` gives, it refuses what Foundation's JSON parser refuses, and it decodes strings as
/// Foundation does.
final class JSONReaderTests: XCTestCase {
    func value(_ text: String) throws -> Double {
        try JSONReader.read(Array(text.utf8)) { try $0.readDouble() }
    }

    func testNumbersAreTheDoublesStrtodGives() throws {
        var random = DecoderRobustnessTests.SplitMix(state: 28)
        var spellings = [
            "0", "-0", "1781525700", "0.0254", "13.4", "-2.5", "100", "0.1", "0.3", "1e5", "1E-5", "2.5e+3", "-0.0",
            "123456789012345", "1234567890123456", "12345678901234567890", "9007199254740993",
            "0.000000000000000000001",
            "1.7976931348623157e308", "5e-324", "0.1000000000000000055511151231257827",
        ]
        for _ in 0..<20000 {
            let whole = String(random.next() % 1_000_000)
            let fraction = String(random.next() % 10_000_000_000_000_000).prefix(Int(random.next() % 18))
            let sign = random.next() % 4 == 0 ? "-" : ""
            spellings.append(sign + whole + (fraction.isEmpty ? "" : "." + fraction))
        }
        for spelling in spellings {
            let expected = try XCTUnwrap(Double(spelling), spelling)
            XCTAssertEqual(try value(spelling).bitPattern, expected.bitPattern, spelling)
        }
    }

    /// Foundation's parser lets a trailing comma pass (`[1,]`); so does the reader, so that an
    /// answer decoded before decodes now.
    func testTheGrammarIsFoundationsGrammar() throws {
        let texts = [
            "1", "-1", "01", "-01", "1.", ".5", "+1", "-", "1e", "1e+", "1.5e3", "--1", "0x10", "Infinity", "NaN",
            "[1,]", "[,1]", "[1 2]", "[]", "[[]]", "{}", "{\"a\":1}", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "{\"a\":}",
            "\"abc", "\"a\u{01}b\"", "\"\\q\"", "\"\\u12G4\"", "\"\\u00e9\"", "\"\\/\"", "tru", "true", "nul", "null",
            "false", "[1]x", "[1] ", " [1]", "{\"a\":[1,{\"b\":null}]}", "[true,false,null,\"x\",1.5,{}]", "",
            "[\"\\", "\"\\uD83D\\uDE00\"", "[1,,]", "[,]", "{,}", "{\"a\":1,,}",
        ]
        for text in texts {
            let foundation =
                (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil
            let reader = (try? JSONReader.read(Array(text.utf8)) { try $0.skipValue() }) != nil
            XCTAssertEqual(reader, foundation, "\(text.debugDescription): reader \(reader), Foundation \(foundation)")
        }
    }

    func testStringsAreDecodedAsFoundationDecodesThem() throws {
        let texts = [
            #""plain""#, #""µg/m³""#, #""tab\tnew\nline\r""#, #""\"quoted\" \\ \/""#, #""\u00e9\u0041""#,
            #""\ud83d\ude00 face""#, #""\b\f""#, #""""#,
        ]
        for text in texts {
            let foundation = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) as? String)
            XCTAssertEqual(try JSONReader.read(Array(text.utf8)) { try $0.readString() }, foundation, text)
        }
        let lone = try JSONReader.read(Array(#""a\ud83db""#.utf8)) { try $0.readString() }
        XCTAssertEqual(lone, "a\u{FFFD}b", "a lone surrogate is the replacement character")
    }

    func testAFieldNameWithEscapesMatchesItsLiteral() throws {
        let units = try JSONReader.read(Array(#"{"temp\u0065rature_2m":"°F","x":[{"y":null}]}"#.utf8)) {
            try OpenMeteoSectionUnits(json: &$0)
        }
        XCTAssertEqual(units.temperature_2m, "°F")
    }

    func testAWrongTypeNamesItsFieldAndIsNotASyntaxFailure() {
        let text = #"{"hourly":{"time":[1,2],"temperature_2m":[1,"warm"]}}"#
        XCTAssertThrowsError(try JSONReader.read(Array(text.utf8)) { try OpenMeteoForecast(json: &$0) }) { error in
            let failure = error as? JSONReader.Failure
            XCTAssertEqual(failure?.syntax, false)
            XCTAssertEqual(failure?.path, ["hourly", "temperature_2m"])
            XCTAssertEqual(failure?.description, "hourly.temperature_2m: expected a number at byte 44")
        }
        XCTAssertThrowsError(
            try JSONReader.read(Array(#"{"utc_offset_seconds":3600.5}"#.utf8)) {
                try OpenMeteoForecast(json: &$0)
            }
        ) { error in
            XCTAssertEqual(
                (error as? JSONReader.Failure)?.description, "utc_offset_seconds: expected a whole number at byte 22")
        }
    }

    func testAnEntryOfTheWrongTypeIsSkippedAndItsNeighboursRead() {
        let good = #"{"current":{"time":1781525700,"temperature_2m":13.4}}"#
        let text = "[\(good), {\"current\":{\"time\":\"noon\",\"deep\":[[1]]}}, null, \(good)]"
        let entries = OpenMeteoBatches.entries(Array(text.utf8), count: 4, as: OpenMeteoForecast.self, source: "test")
        XCTAssertEqual(entries.map { (try? $0.get())?.current?.temperature_2m }, [13.4, nil, nil, 13.4])
        XCTAssertEqual(
            entries[1].failureMessage, "test: bad entry: current.time: expected a number at byte 75")
        XCTAssertEqual(entries[2].failureMessage, "test: bad entry: expected an object at byte 98")
        let broken = OpenMeteoBatches.entries(
            Array("[\(good), {\"current\":{\"time\":\"noon\",]}]".utf8), count: 2, as: OpenMeteoForecast.self,
            source: "test")
        XCTAssertEqual(
            broken.map(\.failureMessage),
            Array(repeating: "test: answer is not valid JSON: current: expected a field name at byte 82", count: 2),
            "a wrong type followed by broken text fails the batch: the entry cannot be skipped")
    }

    /// A number beyond a Double is valid JSON: where it is read it fails its entry as a wrong
    /// type does, and where it is skipped (a field Cloudy does not read) it fails nothing. It
    /// failed the whole batch of up to 100 places, as text that is not JSON does.
    func testANumberOutOfRangeSpoilsOnlyItsEntry() {
        let good = #"{"current":{"time":1781525700,"temperature_2m":13.4}}"#
        let read = #"{"current":{"time":1781525700,"temperature_2m":1e309}}"#
        let skipped = #"{"current":{"time":1781525700,"temperature_2m":13.4,"ozone":-2e400}}"#
        let text = "[\(good), \(read), \(skipped)]"
        let entries = OpenMeteoBatches.entries(Array(text.utf8), count: 3, as: OpenMeteoForecast.self, source: "test")
        XCTAssertEqual(entries.map { (try? $0.get())?.current?.temperature_2m }, [13.4, nil, 13.4])
        XCTAssertEqual(
            entries[1].failureMessage, "test: bad entry: current.temperature_2m: number out of range at byte 103")
    }
}
