import NIOCore
import XCTest

@testable import Cloudy

/// The gzip members `/metrics` serves: compressed in pieces, a stretch of text at a time, with a
/// live tail appended per scrape; each must read back as exactly the text it was made from.
final class CompressedPageTests: XCTestCase {
    /// The cached gzip prefix plus a per-scrape tail must be one valid gzip member holding
    /// exactly the cached text followed by the tail, whatever the tail's size.
    func testGzipBodyWithLiveTailDecompressesToTheWholeText() throws {
        let cached = Array(
            (0..<20_000).map { "weather_temperature_celsius{location=\"P\($0)\"} \($0 % 40)\n" }.joined().utf8)
        let body = GzipBody(compressing: cached)
        XCTAssertLessThan(body.prefix.readableBytes, cached.count / 5, "the cached part is really compressed")
        for tail in [[UInt8](), Array("process_open_fds 7\n".utf8), [UInt8](repeating: 65, count: 70_000)] {
            let member = Array(body.prefix.readableBytesView) + body.suffix(appending: tail)
            XCTAssertEqual(Gunzip.decompress(member), cached + tail, "tail of \(tail.count) bytes")
        }
    }

    /// Compressing pieces (as the OpenMetrics body is kept) gives the same text as the whole,
    /// with empty pieces, tiny ones, and ones larger than zlib's output steps.
    func testGzipOfPiecesIsTheGzipOfTheirConcatenation() throws {
        // Printable noise that deflate cannot shrink, eight bytes per random number (a call per
        // byte took half a second in the suite's unoptimized build).
        var generator = SystemRandomNumberGenerator()
        let words = (0..<75_000).map { _ in generator.next() }
        let big = words.withUnsafeBytes { Array($0) }.map { 32 + $0 % 95 }
        let pieces: [ArraySlice<UInt8>] = [
            big[0..<0], big[0..<1], big[1..<400_000], [], big[400_000...], Array("# EOF\n".utf8)[...],
        ]
        let body = GzipBody(compressing: pieces)
        let whole = pieces.flatMap { $0 }
        XCTAssertEqual(body.length, whole.count)
        XCTAssertEqual(Gunzip.decompress(Array(body.prefix.readableBytesView) + body.suffix(appending: [])), whole)
        let empty = GzipBody(compressing: [UInt8]())
        XCTAssertEqual(Gunzip.decompress(Array(empty.prefix.readableBytesView) + empty.suffix(appending: [])), [])
    }

    /// A piece given its text in stretches (as a run's text is compressed while it is written)
    /// is the piece of the whole text: same text read back, same CRC and length.
    func testAPieceGivenInStretchesIsThePieceOfTheWhole() throws {
        let text = Array((0..<30_000).map { "weather_up{location=\"P\($0)\"} \($0 % 2)\n" }.joined().utf8)
        let whole = DeflatedPiece(compressing: [text[...]])
        let deflater = PieceDeflater()
        for start in stride(from: 0, to: text.count, by: 7_000) {
            deflater.add(text[start..<min(start + 7_000, text.count)])
            deflater.add([])  // nothing, between stretches: changes nothing
        }
        let stretched = deflater.finish()
        XCTAssertEqual(stretched.length, text.count)
        XCTAssertEqual(stretched.crc, whole.crc)
        for piece in [whole, stretched] {
            let member = GzipBody(pieces: [piece])
            let bytes = Array(member.prefix.readableBytesView) + member.suffix(appending: [])
            XCTAssertTrue(Gunzip.decompress(bytes) == text, "reads back as the text")
        }
    }

    /// The writer hands its text over whenever it holds `flushingAt` bytes, keeps the rest, and
    /// the stretches and the rest are the text `writeSamples` writes whole.
    func testTheWriterFlushesStretchesInOrderAndKeepsTheRest() {
        var family = MetricFamily(descriptor: MetricDescriptor("weather_up", .gauge, "Up."))
        for place in 0..<2_000 {
            family.samples.append(MetricSample(suffix: "", labels: [("location", "P\(place)")], value: 1))
        }
        var whole = ExpositionWriter()
        whole.writeSamples(family)
        var stretched = ExpositionWriter(capacity: 1024)
        var stretches: [[UInt8]] = []
        stretched.writeSamples(family, flushingAt: 5_000) { stretches.append(Array($0)) }
        XCTAssertGreaterThan(stretches.count, 5)
        for stretch in stretches {
            XCTAssertTrue((5_000..<5_040).contains(stretch.count), "\(stretch.count): at least 5,000, cut after a line")
            XCTAssertEqual(stretch.last, UInt8(ascii: "\n"))
        }
        XCTAssertLessThan(stretched.count, 5_000)
        XCTAssertTrue(
            stretches.flatMap { $0 } + stretched.bytes == whole.bytes, "the stretches and the rest are the text")
    }

    /// Families longer than a stretch (`RenderedMetrics.stretchBytes`), with a counter between
    /// them (its header lines differ per format and end a shared piece already given several
    /// stretches): both formats and both gzip members read back as the writer spells the page.
    func testAPageOfFamiliesLongerThanAStretchReadsBackWhole() throws {
        var page = MetricFamilies()
        // In the page's (name) order: daily, then the counter, then hourly.
        let daily = MetricDescriptor("weather_forecast_daily_temperature_max_celsius", .gauge, "Highest.")
        let counter = MetricDescriptor("weather_forecast_hourly_answers", .counter, "Answers.")
        let hourly = MetricDescriptor("weather_forecast_hourly_temperature_celsius", .gauge, "Air temperature.")
        for place in 0..<3_000 {
            for step in 1...2 {
                let location = ("location", "Place \(place)")
                page.add(daily, labels: [location, ("day", "\(step)")], value: Double(place) / 4)
                page.add(hourly, labels: [location, ("hour", "\(step)")], value: Double(place) / 8)
            }
            page.add(counter, labels: [("location", "Place \(place)")], value: 2, suffix: "_total")
        }
        XCTAssertEqual(page.sorted().map(\.descriptor), [daily, counter, hourly])
        for family in [daily, hourly] {
            var writer = ExpositionWriter()
            writer.writeSamples(try XCTUnwrap(page.families.first { $0.descriptor == family }))
            XCTAssertGreaterThan(writer.count, RenderedMetrics.stretchBytes, "\(family.name) is longer than a stretch")
        }
        assertIsTheWritersText(RenderedMetrics(page: page, processMetrics: { MetricFamilies() }), of: page)
    }
}

/// `rendered` reads back, in both formats and through both gzip members, as the writer spells
/// `page` family after family. Compared whole: a mismatch would print megabytes.
func assertIsTheWritersText(
    _ rendered: RenderedMetrics, of page: MetricFamilies, file: StaticString = #filePath, line: UInt = #line
) {
    for format in [ExpositionFormat.prometheus, .openMetrics] {
        var expected = ExpositionWriter()
        for family in page.sorted() { expected.write(family, format: format) }
        let text = format == .prometheus ? rendered.prometheus : rendered.openMetrics
        XCTAssertTrue(
            Array(text.readableBytesView) == expected.bytes, "\(format): the writer's text", file: file, line: line)
        let gzip = rendered.gzip(format)
        let member = Array(gzip.prefix.readableBytesView) + gzip.suffix(appending: [])
        XCTAssertTrue(
            Gunzip.decompress(member) == expected.bytes, "\(format): its gzip member reads back", file: file, line: line
        )
    }
}
