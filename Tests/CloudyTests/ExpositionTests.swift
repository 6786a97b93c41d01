import NIOCore
import XCTest

@testable import Cloudy

final class ExpositionTests: XCTestCase {
    func testLabelValuesAndHelpAreEscaped() {
        var page = MetricFamilies()
        page.add(
            MetricDescriptor("x", .gauge, "back\\slash and\nnewline"), labels: [("location", "a\"b\\c\nd")], value: 1)
        var writer = ExpositionWriter()
        for family in page.sorted() { writer.write(family, format: .prometheus) }
        XCTAssertEqual(
            String(decoding: writer.bytes, as: UTF8.self),
            """
            # HELP x back\\\\slash and\\nnewline
            # TYPE x gauge
            x{location="a\\"b\\\\c\\nd"} 1

            """)
    }

    /// The writer spells whole numbers itself, digit by digit; every value reads exactly as
    /// `SampleValue.format` spells it, at the edges of that fast path too.
    func testSampleValuesAreSpelledAsSampleValueFormatSpellsThem() {
        let values: [Double] = [
            0, -0.0, 1, -1, 7, 10, 99, 100, 1_781_525_700, -1_781_525_700, 999_999_999_999_999, -999_999_999_999_999,
            1e15, -1e15, 1e16, 0.1, -2.5, 101_450, 24.400000000000002, 1e-300, .nan, .infinity, -.infinity,
            Double.greatestFiniteMagnitude, 4.4704,
        ]
        var page = MetricFamilies()
        let descriptor = MetricDescriptor("x", .gauge, "X.")
        for value in values { page.add(descriptor, labels: [("v", "Zürich \"☁️\"")], value: value) }
        var writer = ExpositionWriter()
        for family in page.sorted() { writer.writeSamples(family) }
        XCTAssertEqual(
            String(decoding: writer.bytes, as: UTF8.self),
            values.map { "x{v=\"Zürich \\\"☁️\\\"\"} \(SampleValue.format($0))\n" }.joined())
        XCTAssertEqual(SampleValue.format(-0.0), "0")
        XCTAssertEqual(SampleValue.format(999_999_999_999_999), "999999999999999")
    }

    /// Random values of the kinds a page holds (tenths, hundredths, ratios, conversions, and any
    /// Double at all) are spelled by the writer's digit-by-digit path exactly as `description`
    /// spells them.
    func testShortDecimalsAreSpelledAsDescriptionSpellsThem() {
        var random = DecoderRobustnessTests.SplitMix(state: 19)
        var values: [Double] = [0.5, -0.5, 0.0001, -0.0001, 0.00015, 12.5, 1e14 + 0.5, 0x1p50 / 10 + 0.5, 0.1 + 0.2]
        for _ in 0..<50_000 {
            let whole = Double(random.next() % 100_000) * (random.next() % 2 == 0 ? 1 : -1)
            let decimals = Double(random.next() % 10_000)
            values.append(whole + decimals / [10, 100, 1000, 10000][Int(random.next() % 4)])
            values.append(Double(bitPattern: random.next()))
            values.append(Double(random.next() % 1000) / 3.6)
        }
        values = values.filter(\.isFinite)
        var page = MetricFamilies()
        for value in values { page.add(MetricDescriptor("x", .gauge, "X."), value: value) }
        var writer = ExpositionWriter()
        for family in page.sorted() { writer.writeSamples(family) }
        let lines = String(decoding: writer.bytes, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, values.count)
        for (line, value) in zip(lines, values) where line != "x \(SampleValue.format(value))" {
            XCTFail("\(value): the writer spells \(line)")
        }
    }

    func testCountersAreSpelledPerFormat() {
        var page = MetricFamilies()
        page.add(
            MetricDescriptor("requests", .counter, "Requests."), labels: [("code", "200")], value: 3, suffix: "_total")
        var prometheus = ExpositionWriter()
        var openMetrics = ExpositionWriter()
        for family in page.sorted() {
            prometheus.write(family, format: .prometheus)
            openMetrics.write(family, format: .openMetrics)
        }
        openMetrics.writeEOF()
        XCTAssertEqual(
            String(decoding: prometheus.bytes, as: UTF8.self),
            "# HELP requests_total Requests.\n# TYPE requests_total counter\nrequests_total{code=\"200\"} 3\n")
        XCTAssertEqual(
            String(decoding: openMetrics.bytes, as: UTF8.self),
            "# HELP requests Requests.\n# TYPE requests counter\nrequests_total{code=\"200\"} 3\n# EOF\n")
    }

    func testSampleValuesReadBackExactly() {
        XCTAssertEqual(SampleValue.format(1), "1")
        XCTAssertEqual(SampleValue.format(-40), "-40")
        XCTAssertEqual(SampleValue.format(24.5), "24.5")
        XCTAssertEqual(SampleValue.format(1_781_525_700), "1781525700")
        XCTAssertEqual(SampleValue.format(.infinity), "+Inf")
        XCTAssertEqual(SampleValue.format(.nan), "NaN")
        for value in [13.1 / 3.6, 76.1, 0.0001, 1e-7, 123456.789, 13.1 / 1.609344, 1e20] {
            XCTAssertEqual(Double(SampleValue.format(value)), value)
        }
    }

    func testOpenMetricsOnlyWhenPreferred() {
        XCTAssertEqual(ExpositionFormat.negotiate(accept: nil), .prometheus)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "*/*"), .prometheus)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "application/openmetrics-text"), .openMetrics)
        // What Prometheus 2.x sends by default:
        XCTAssertEqual(
            ExpositionFormat.negotiate(
                accept:
                    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
            ), .openMetrics)
        XCTAssertEqual(
            ExpositionFormat.negotiate(accept: "text/plain;version=0.0.4,application/openmetrics-text;q=0.5"),
            .prometheus)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "application/openmetrics-text;q=0"), .prometheus)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "Application/OpenMetrics-Text; Q=1"), .openMetrics)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "APPLICATION/OPENMETRICS-TEXT"), .openMetrics)
    }

    func testGzipAcceptance() {
        XCTAssertTrue(Routes.acceptsGzip("gzip"))
        XCTAssertTrue(Routes.acceptsGzip("deflate, gzip;q=0.8"))
        XCTAssertTrue(Routes.acceptsGzip("*"))
        XCTAssertFalse(Routes.acceptsGzip("gzip;q=0"))
        XCTAssertFalse(Routes.acceptsGzip("identity"))
        XCTAssertFalse(Routes.acceptsGzip(nil))
        XCTAssertTrue(Routes.acceptsGzip("br, GZip ;\tq=0.5"))
        XCTAssertFalse(Routes.acceptsGzip("gzipper, x-gzip"))
        XCTAssertFalse(Routes.acceptsGzip("identity, gzip; q=0.000"))
        XCTAssertFalse(Routes.acceptsGzip("gzi"))
        // `*` stands for the codings not listed: an explicit gzip;q=0 refuses it either way.
        XCTAssertFalse(Routes.acceptsGzip("gzip;q=0, *"))
        XCTAssertFalse(Routes.acceptsGzip("*, gzip;q=0"))
        XCTAssertTrue(Routes.acceptsGzip("gzip;q=0.1, *;q=0"))
        XCTAssertFalse(Routes.acceptsGzip("br, *;q=0"))
        XCTAssertFalse(Routes.acceptsGzip("**"))
        XCTAssertTrue(Routes.acceptsGzip(" * ;q=1"))
    }

    /// Token comparison folds ASCII letters only: `@` and `` ` `` differ by the case bit too.
    func testHeaderTokensCompareIgnoringTheCaseOfLettersOnly() {
        XCTAssertTrue("Text/PLAIN"[...].equalsIgnoringCase("text/plain"))
        XCTAssertFalse("a@b"[...].equalsIgnoringCase("a`b"))
        XCTAssertFalse("[gzip]"[...].equalsIgnoringCase("{gzip}"))
        XCTAssertFalse("gzip"[...].equalsIgnoringCase("gzip2"))
        XCTAssertFalse("gzip2"[...].equalsIgnoringCase("gzip"))
        XCTAssertTrue(""[...].equalsIgnoringCase(""))
        XCTAssertFalse("zürich"[...].equalsIgnoringCase("ZÜRICH"), "only ASCII letters fold")
    }

    func testQualityListEntries() {
        let entries = QualityList(
            " text/plain;version=0.0.4;q=0.5 ,, */* ; q=0.1,application/openmetrics-text;q=bad, gzip;q=, br;Q=0.25"
        ).map { "\($0.value)=\($0.q)" }
        XCTAssertEqual(
            entries, ["text/plain=0.5", "*/*=0.1", "application/openmetrics-text=0.0", "gzip=0.0", "br=0.25"])
        XCTAssertEqual(Array(QualityList("")).count, 0)
        XCTAssertEqual(Array(QualityList(" , ;q=1")).count, 0)
    }

    /// Both gzip members are made of the same compressed pieces with the differing header lines
    /// swapped in; read back (as plain scrapes read them), each must be exactly what the writer
    /// spells for its format.
    func testBothFormatsSpellTheSameTextAsTheWriter() throws {
        var page = MetricFamilies()
        let counter = MetricDescriptor("cloudy_exporter_upstream_requests", .counter, "Requests by \"code\".")
        let gauge = MetricDescriptor("weather_temperature_celsius", .gauge, "Air temperature.")
        page.add(gauge, labels: [("location", "A")], value: 1.5)
        page.add(counter, labels: [("code", "200")], value: 3, suffix: "_total")
        page.add(MetricDescriptor("weather_up", .gauge, "1 if \"fine\"."), labels: [("location", "A")], value: 1)
        var writer = ExpositionWriter()
        var prometheus = ExpositionWriter()
        for family in page.sorted() {
            writer.write(family, format: .openMetrics)
            prometheus.write(family, format: .prometheus)
        }
        let rendered = RenderedMetrics(page: page, processMetrics: ProcessMetrics.page)
        XCTAssertEqual(String(buffer: rendered.openMetrics), String(decoding: writer.bytes, as: UTF8.self))
        XCTAssertEqual(String(buffer: rendered.prometheus), String(decoding: prometheus.bytes, as: UTF8.self))
        let gzip = rendered.gzip(.openMetrics)
        XCTAssertEqual(
            Gunzip.decompress(Array(gzip.prefix.readableBytesView) + gzip.suffix(appending: [])), writer.bytes)
    }

    /// A page of many runs (written and compressed side by side) reads back, in both formats and
    /// through both gzip members, as the writer spells it family after family.
    func testAPageOfManyRunsIsTheWritersTextInOrder() throws {
        var page = MetricFamilies()
        for family in 0..<40 {
            let descriptor = MetricDescriptor(
                "weather_family_\(family)", family % 7 == 0 ? .counter : .gauge, "Family \"\(family)\".")
            for place in 0..<(family * 97 % 300) {
                page.add(
                    descriptor, labels: [("location", "P\(place)")], value: Double(place) / 8,
                    suffix: family % 7 == 0 ? "_total" : "")
            }
        }
        // Runs of 1,000 samples, not the exporter's 20,000: the same cut, a tenth of the page.
        let runs = RenderedMetrics.runs(of: page.sorted(), samplesPerRun: 1_000)
        XCTAssertGreaterThanOrEqual(runs.count, 3, "the page is cut into several runs")
        XCTAssertEqual(runs.map(\.count).reduce(0, +), page.families.count)
        let rendered = RenderedMetrics(page: page, processMetrics: ProcessMetrics.page, samplesPerRun: 1_000)
        assertIsTheWritersText(rendered, of: page)
    }

    /// The plain text is inflated from the gzip member when first read, kept while plain scrapes
    /// read it, and let go a second after the last one by a timer, with no scrape needed (it used
    /// to be let go only at the next scrape, so one plain scrape pinned the text until then).
    func testPlainTextIsLetGoASecondAfterTheLastReadWithoutAnotherScrape() throws {
        var page = MetricFamilies()
        page.add(MetricDescriptor("weather_up", .gauge, "Up."), labels: [("location", "A")], value: 1)
        let clock = ManualClock()
        let rendered = RenderedMetrics(page: page, processMetrics: { MetricFamilies() }, clock: clock)
        let text = "# HELP weather_up Up.\n# TYPE weather_up gauge\nweather_up{location=\"A\"} 1\n"
        func plainScrape() -> String {
            rendered.scrapeBody(.prometheus, gzip: false).map { String(buffer: $0) }.joined()
        }
        XCTAssertEqual(rendered.plainTextsKept, 0, "nothing is inflated before a plain scrape")
        XCTAssertEqual(plainScrape(), text)
        XCTAssertEqual(rendered.plainTextsKept, 1)
        clock.advance(by: 0.6)
        XCTAssertEqual(plainScrape(), text)
        clock.advance(by: 0.6)
        XCTAssertEqual(rendered.plainTextsKept, 1, "read 0.6 s ago: kept")
        clock.advance(by: 0.5)
        XCTAssertEqual(rendered.plainTextsKept, 0, "unread for a second: let go without another scrape")
        XCTAssertEqual(clock.pendingDeadlines, [], "and no timer is left")
        _ = rendered.scrapeBody(.prometheus, gzip: true)
        XCTAssertEqual(rendered.plainTextsKept, 0, "a gzip scrape inflates nothing")
        XCTAssertEqual(plainScrape(), text, "inflated again when read")
    }

    /// The next rendering lets go of the kept text at once: the timer does not hold it.
    func testTheKeptTextGoesWithItsRendering() throws {
        var page = MetricFamilies()
        page.add(MetricDescriptor("weather_up", .gauge, "Up."), labels: [("location", "A")], value: 1)
        let gzip = RenderedMetrics(page: page, processMetrics: { MetricFamilies() }).prometheusGzip
        let clock = ManualClock()
        weak var released: PlainBodies?
        do {
            let bodies = PlainBodies(prometheus: gzip, openMetrics: gzip, clock: clock)
            XCTAssertEqual(bodies.text(.prometheus).count, 1)
            XCTAssertEqual(clock.pendingDeadlines.count, 1)
            released = bodies
        }
        XCTAssertNil(released, "nothing else holds the texts of a replaced rendering")
        XCTAssertEqual(clock.pendingDeadlines, [], "its timer is cancelled")
    }

    /// A kept text takes its own length and less than 64 KiB more (one ByteBuffer grew to the
    /// next power of two: 17.4 MB of text at W1000 held 32 MiB).
    func testTheKeptTextIsHeldInPiecesOfItsOwnSize() throws {
        var page = MetricFamilies()
        let up = MetricDescriptor("weather_up", .gauge, "Up.")
        for index in 0..<12_000 { page.add(up, labels: [("location", "Place number \(index)")], value: 1) }
        var writer = ExpositionWriter()
        for family in page.sorted() { writer.write(family, format: .prometheus) }
        let clock = ManualClock()
        let rendered = RenderedMetrics(page: page, processMetrics: { MetricFamilies() }, clock: clock)
        let bodies = PlainBodies(
            prometheus: rendered.prometheusGzip, openMetrics: rendered.openMetricsGzip, clock: clock)
        let pieces = bodies.text(.prometheus)
        XCTAssertEqual(pieces.flatMap { Array($0.readableBytesView) }, writer.bytes)
        XCTAssertGreaterThan(writer.bytes.count, 2 * PlainBodies.smallestPiece)
        XCTAssertGreaterThanOrEqual(bodies.keptCapacity, writer.bytes.count)
        XCTAssertLessThan(bodies.keptCapacity, writer.bytes.count + PlainBodies.smallestPiece)
        for length in [0, 1, 65_535, 65_536, 65_537, 300_000, 1_048_576, 17_383_808] {
            let sizes = PlainBodies.pieceSizes(length)
            XCTAssertEqual(sizes.reduce(0, +), length, "\(length)")
            XCTAssertTrue(sizes.dropLast().allSatisfy { $0.nonzeroBitCount == 1 }, "\(length): \(sizes)")
            XCTAssertLessThan(sizes.last ?? 0, max(PlainBodies.smallestPiece, length + 1))
        }
    }
}
