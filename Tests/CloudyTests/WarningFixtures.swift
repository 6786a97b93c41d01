@testable import Cloudy

/// The reference's warning fixtures, decoded, and a board that holds them for given places: the
/// state the warning tests, the golden pages and the HTML pages render.
enum WarningFixtures {
    static func decoded(_ source: WarningSourceName) throws -> [WeatherWarning] {
        switch source {
        case .nws: return try decode(NWSAlerts.self, "nws-alerts-active.json").warnings
        case .metNorway: return try decode(METAlerts.self, "met-norway-metalerts.json").warnings
        case .dwd: return try decode(BrightSkyAlerts.self, "brightsky-alerts.json").warnings
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ fixture: String) throws -> T {
        try WeatherAPI.decode(type, from: try TestPaths.fixtureBytes(fixture), as: fixture).get()
    }

    /// Each place's source answered with its fixture at `at`.
    static func board(_ asks: [(place: String, source: WarningSourceName)], at: Double) throws -> WarningBoard {
        var board = WarningBoard()
        for ask in asks {
            board.record(place: ask.place, source: ask.source.rawValue, .success(try decoded(ask.source)), at: at)
        }
        return board
    }

    /// Every source at its default URL.
    static let allSources = WarningSettings(sources: WarningSourceName.allCases.map { WarningSourceSettings(name: $0) })
}
