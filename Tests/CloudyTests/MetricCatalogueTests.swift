import Foundation
import XCTest

@testable import Cloudy

/// docs/metrics.md stays true: every family on a golden page is documented there, every family
/// documented there is on a golden page, and the live families (`process_*` and the connection
/// counts, appended per scrape, so never on a golden page) are documented in their own section
/// and match what a scrape appends.
final class MetricCatalogueTests: XCTestCase {
    /// What `T` and `W` stand for at the end of a documented name, as docs/metrics.md says.
    static let temperatureUnits = ["celsius", "fahrenheit"]
    static let windSpeedUnits = ["meters_per_second", "kilometers_per_hour", "miles_per_hour", "knots"]
    /// Rows under a heading that starts like this are the live families.
    static let liveHeading = "## Live families"

    static var catalogue: URL {
        TestPaths.packageRoot.appendingPathComponent("docs/metrics.md")
    }

    static var goldenDirectory: URL {
        TestPaths.fixtures.appendingPathComponent("golden")
    }

    func testEveryFamilyOnAGoldenPageIsDocumented() throws {
        let documented = try Self.documentedFamilies(Self.read(Self.catalogue))
        let golden = try Self.goldenFamilies()
        let undocumented = golden.subtracting(documented.rendered).sorted()
        XCTAssertEqual(undocumented, [], "on a golden page but not in docs/metrics.md")
    }

    func testEveryDocumentedFamilyIsOnAGoldenPage() throws {
        let documented = try Self.documentedFamilies(Self.read(Self.catalogue))
        let golden = try Self.goldenFamilies()
        let missing = documented.rendered.subtracting(golden).sorted()
        XCTAssertEqual(missing, [], "documented in docs/metrics.md but on no golden page")
    }

    func testLiveFamiliesAreDocumentedApartAndMatchWhatAScrapeAppends() throws {
        let documented = try Self.documentedFamilies(Self.read(Self.catalogue))
        let golden = try Self.goldenFamilies()
        var live = ExpositionWriter(capacity: 1024)
        let tail = CloudyApplication.liveFamilies(connections: ConnectionLimit(maximum: 1))
        for family in tail.sorted() { live.write(family, format: .prometheus) }
        let appended = Self.typedFamilies(String(decoding: live.bytes, as: UTF8.self), openMetrics: false)
        XCTAssertFalse(appended.isEmpty, "the live tail has families")
        XCTAssertEqual(
            documented.live.sorted(), appended.sorted(),
            "the live section of docs/metrics.md vs the live tail")
        XCTAssertEqual(
            documented.live.intersection(golden).sorted(), [],
            "a live family is read per scrape and cannot be on a rendered golden page")
    }

    /// A name written twice would let a deleted row go unnoticed.
    func testEveryFamilyIsDocumentedOnce() throws {
        let rows = try Self.catalogueRows(Self.read(Self.catalogue))
        let names = rows.flatMap { Self.expand($0.name) }
        let repeated = Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(repeated, [], "documented more than once in docs/metrics.md")
    }

    /// The parsers themselves, on text that shows each rule, so a broken parser cannot make the
    /// checks above pass by finding nothing on either side.
    func testParsersReadTheConventions() {
        let doc = """
            ## Current
            | family | unit |
            |---|---|
            | `weather_temperature_T` | °C |
            | `weather_up` | 0/1 |
            text mentioning `weather_not_a_row`
            ## Live families (read at every scrape)
            | `process_open_fds` | gauge |
            """
        let documented = Self.documentedFamilies(doc)
        XCTAssertEqual(
            documented.rendered,
            ["weather_temperature_celsius", "weather_temperature_fahrenheit", "weather_up"])
        XCTAssertEqual(documented.live, ["process_open_fds"])

        let page = """
            # HELP cloudy_exporter_upstream_requests Upstream requests.
            # TYPE cloudy_exporter_upstream_requests counter
            cloudy_exporter_upstream_requests_total{code="200"} 1
            # TYPE weather_up gauge
            weather_up{location="Berlin"} 1
            # EOF
            """
        XCTAssertEqual(
            Self.typedFamilies(page, openMetrics: true),
            ["cloudy_exporter_upstream_requests_total", "weather_up"])
        XCTAssertEqual(
            Self.typedFamilies(page, openMetrics: false),
            ["cloudy_exporter_upstream_requests", "weather_up"])
    }

    // MARK: - Reading the catalogue

    struct Row {
        var name: String
        var live: Bool
    }

    /// Table rows whose first cell is a name in backticks, with whether they sit under the live heading.
    static func catalogueRows(_ markdown: String) -> [Row] {
        var rows: [Row] = []
        var underLiveHeading = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                underLiveHeading = line.hasPrefix(liveHeading)
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard line.hasPrefix("|"), cells.count > 2 else { continue }
            let first = cells[1].trimmingCharacters(in: .whitespaces)
            guard first.count > 2, first.hasPrefix("`"), first.hasSuffix("`") else { continue }
            let name = String(first.dropFirst().dropLast())
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }) else { continue }
            rows.append(Row(name: name, live: underLiveHeading))
        }
        return rows
    }

    static func documentedFamilies(_ markdown: String) -> (rendered: Set<String>, live: Set<String>) {
        var rendered = Set<String>()
        var live = Set<String>()
        for row in catalogueRows(markdown) {
            for name in expand(row.name) {
                if row.live { live.insert(name) } else { rendered.insert(name) }
            }
        }
        return (rendered, live)
    }

    /// `x_T` is one family per temperature unit, `x_W` one per wind-speed unit.
    static func expand(_ name: String) -> [String] {
        if name.hasSuffix("_T") { return temperatureUnits.map { String(name.dropLast()) + $0 } }
        if name.hasSuffix("_W") { return windSpeedUnits.map { String(name.dropLast()) + $0 } }
        return [name]
    }

    // MARK: - Reading exposition pages

    /// The families a page declares with `# TYPE`. OpenMetrics names a counter family without
    /// `_total`; the catalogue uses the name its samples carry, so `_total` is added back.
    static func typedFamilies(_ page: String, openMetrics: Bool) -> Set<String> {
        var families = Set<String>()
        for line in page.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            guard parts.count == 4 else { continue }
            let name = String(parts[2])
            families.insert(openMetrics && parts[3] == "counter" ? name + "_total" : name)
        }
        return families
    }

    static func goldenFamilies() throws -> Set<String> {
        let files = try FileManager.default.contentsOfDirectory(at: goldenDirectory, includingPropertiesForKeys: nil)
            .filter { ["prom", "openmetrics"].contains($0.pathExtension) }
        XCTAssertGreaterThanOrEqual(files.count, 2, "golden pages found in \(goldenDirectory.path)")
        var families = Set<String>()
        for file in files {
            let onPage = typedFamilies(try read(file), openMetrics: file.pathExtension == "openmetrics")
            XCTAssertFalse(onPage.isEmpty, "\(file.lastPathComponent) declares families")
            families.formUnion(onPage)
        }
        return families
    }

    static func read(_ url: URL) throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }
}
