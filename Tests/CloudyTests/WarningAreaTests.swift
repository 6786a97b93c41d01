import XCTest

@testable import Cloudy

/// Which sources a place asks, from its coordinates: each source's country, territories and
/// waters, generous at borders; `locations[].warnings` overrides; a place outside every area
/// (or not located yet) asks nothing.
final class WarningAreaTests: XCTestCase {
    let all = WarningSettings(sources: WarningSourceName.allCases.map { WarningSourceSettings(name: $0) })

    func asked(_ latitude: Double, _ longitude: Double) -> [WarningSourceName] {
        all.sources(for: Place(name: "p", latitude: latitude, longitude: longitude)).map(\.name)
    }

    func testEachCountryAndTerritoryAsksItsOwnService() {
        XCTAssertEqual(asked(40.7143, -74.006), [.nws], "New York")
        XCTAssertEqual(asked(61.2181, -149.9003), [.nws], "Anchorage")
        XCTAssertEqual(asked(52.8, 173.2), [.nws], "Attu, west of the date line")
        XCTAssertEqual(asked(21.3069, -157.8583), [.nws], "Honolulu")
        XCTAssertEqual(asked(18.4655, -66.1057), [.nws], "San Juan")
        XCTAssertEqual(asked(13.4443, 144.7937), [.nws], "Guam")
        XCTAssertEqual(asked(-14.2756, -170.702), [.nws], "Pago Pago")
        XCTAssertEqual(asked(59.9139, 10.7522), [.metNorway], "Oslo")
        XCTAssertEqual(asked(69.6492, 18.9553), [.metNorway], "Tromsø")
        XCTAssertEqual(asked(78.2232, 15.6267), [.metNorway], "Longyearbyen")
        XCTAssertEqual(asked(51.55, 9.9), [.dwd], "Göttingen")
        XCTAssertEqual(asked(54.18, 7.89), [.dwd], "Heligoland")
    }

    func testPlacesFarFromEveryAreaAskNothing() {
        XCTAssertEqual(asked(50.85, 4.35), [], "Brussels")
        XCTAssertEqual(asked(35.6895, 139.6917), [], "Tokyo")
        XCTAssertEqual(asked(-33.9249, 18.4241), [], "Cape Town")
        XCTAssertEqual(asked(0, 0), [])
    }

    /// Near a border the boxes take in the neighbour's towns: asking them costs one request
    /// answered with no warnings, cutting them off would lose a border town's warnings.
    func testBordersAreGenerous() {
        XCTAssertEqual(asked(42.3149, -83.0364), [.nws], "Windsor, Ontario, across the river from Detroit")
        XCTAssertEqual(asked(48.5734, 7.7521), [.dwd], "Strasbourg, across the Rhine from Kehl")
        XCTAssertEqual(asked(59.3293, 18.0686), [.metNorway], "Stockholm, inside Norway's box")
        XCTAssertEqual(asked(55.0, 8.5), [.dwd], "the Danish border at Sylt")
    }

    func testAPlacesOwnListOverridesItsArea() {
        var tromso = Place(name: "Tromsø", latitude: 69.65, longitude: 18.96)
        tromso.warningSources = [.metNorway, .dwd]
        XCTAssertEqual(all.sources(for: tromso).map(\.name), [.metNorway, .dwd])
        tromso.warningSources = []
        XCTAssertEqual(all.sources(for: tromso).map(\.name), [], "[] for none")
    }

    func testACityNotFoundYetAsksNothing() {
        let springfield = Place(name: "Springfield", city: CitySearch(query: "Springfield, Illinois"))
        XCTAssertEqual(all.sources(for: springfield).map(\.name), [])
        XCTAssertEqual(
            WarningSettings().sources(for: Place(name: "NY", latitude: 40.7, longitude: -74)).count, 0,
            "no sources configured: nothing asked")
    }

    /// `warnings.interval` below a minute is raised (and logged) only against a public host.
    func testTheIntervalHasAFairUseFloorOnPublicHostsOnly() throws {
        var config = Config(places: [Place(name: "NY", latitude: 40.7, longitude: -74)])
        config.refresh.interval = 600
        config.warnings = WarningSettings(interval: 5, sources: [WarningSourceSettings(name: .nws)])
        let log = RecordedLog()
        XCTAssertEqual(try FairUse.clampInterval(config, file: nil, logger: log.logger).warnings.interval, 60)
        let raised = log.entries(containing: "warnings.interval raised")
        XCTAssertEqual(raised.first?.metadata["configured"], "5s")
        XCTAssertEqual(raised.first?.metadata["source"], "nws")
        config.warnings.sources = [WarningSourceSettings(name: .nws, url: "http://127.0.0.1:9")]
        XCTAssertEqual(
            try FairUse.clampInterval(config, file: nil, logger: log.logger).warnings.interval, 5,
            "a mirror or a test fake as written")
    }
}
