import NIOCore
import XCTest
@testable import Cloudy

final class ExpositionTests: XCTestCase {
    func testLabelValuesAndHelpAreEscaped() {
        var page = MetricsPage()
        page.add(MetricDescriptor("x", .gauge, "back\\slash and\nnewline"), labels: [("location", "a\"b\\c\nd")], value: 1)
        var writer = ExpositionWriter()
        for family in page.sorted() { writer.write(family, format: .prometheus) }
        XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), """
        # HELP x back\\\\slash and\\nnewline
        # TYPE x gauge
        x{location="a\\"b\\\\c\\nd"} 1

        """)
    }

    func testCountersAreSpelledPerFormat() {
        var page = MetricsPage()
        page.add(MetricDescriptor("requests", .counter, "Requests."), labels: [("code", "200")], value: 3, suffix: "_total")
        var prometheus = ExpositionWriter(), openMetrics = ExpositionWriter()
        for family in page.sorted() {
            prometheus.write(family, format: .prometheus)
            openMetrics.write(family, format: .openMetrics)
        }
        openMetrics.writeEOF()
        XCTAssertEqual(String(decoding: prometheus.bytes, as: UTF8.self),
                       "# HELP requests_total Requests.\n# TYPE requests_total counter\nrequests_total{code=\"200\"} 3\n")
        XCTAssertEqual(String(decoding: openMetrics.bytes, as: UTF8.self),
                       "# HELP requests Requests.\n# TYPE requests counter\nrequests_total{code=\"200\"} 3\n# EOF\n")
    }

    func testSampleValuesReadBackExactly() {
        XCTAssertEqual(SampleValue.format(1), "1")
        XCTAssertEqual(SampleValue.format(-40), "-40")
        XCTAssertEqual(SampleValue.format(24.5), "24.5")
        XCTAssertEqual(SampleValue.format(1781525700), "1781525700")
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
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), .openMetrics)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "text/plain;version=0.0.4,application/openmetrics-text;q=0.5"), .prometheus)
        XCTAssertEqual(ExpositionFormat.negotiate(accept: "application/openmetrics-text;q=0"), .prometheus)
    }

    func testGzipAcceptance() {
        XCTAssertTrue(Routes.acceptsGzip("gzip"))
        XCTAssertTrue(Routes.acceptsGzip("deflate, gzip;q=0.8"))
        XCTAssertTrue(Routes.acceptsGzip("*"))
        XCTAssertFalse(Routes.acceptsGzip("gzip;q=0"))
        XCTAssertFalse(Routes.acceptsGzip("identity"))
        XCTAssertFalse(Routes.acceptsGzip(nil))
    }

    /// The cached gzip prefix plus a per-scrape tail must be one valid gzip member holding
    /// exactly the cached text followed by the tail, whatever the tail's size.
    func testGzipBodyWithLiveTailDecompressesToTheWholeText() throws {
        let cached = Array((0..<20_000).map { "weather_temperature_celsius{location=\"P\($0)\"} \($0 % 40)\n" }.joined().utf8)
        let body = GzipBody(compressing: cached)
        XCTAssertLessThan(body.prefix.count, cached.count / 5, "the cached part is really compressed")
        for tail in [[UInt8](), Array("process_open_fds 7\n".utf8), [UInt8](repeating: 65, count: 70_000)] {
            let member = body.prefix + body.suffix(appending: tail)
            XCTAssertEqual(Gunzip.decompress(member), cached + tail, "tail of \(tail.count) bytes")
        }
    }
}
