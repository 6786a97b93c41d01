import NIOConcurrencyHelpers

@testable import Cloudy

/// The `reload` closure `Routes` calls: counts calls and answers success, or the refusal given.
final class ReloadRecorder: Sendable {
    private let count = NIOLockedValueBox(0)
    private let refusal: String?

    init(refusal: String? = nil) {
        self.refusal = refusal
    }

    var calls: Int { count.withLockedValue { $0 } }

    var reload: @Sendable () -> String? {
        { [self] in
            count.withLockedValue { $0 += 1 }
            return refusal
        }
    }
}

enum ServerTestStoreState {
    case waitingForFirstRefresh, ready, readyWithNewYorkFailing, everyRefreshFailed
}

/// The one place the server tests build a `WeatherStore`: Berlin, London and New York from the
/// shared Open-Meteo fixture, refreshed at the fixture's time, written in 12h notation.
func makeServerTestStore(_ state: ServerTestStoreState, telemetryPath: String = "/metrics") throws -> WeatherStore {
    let fetchedAt = 1781525760.0
    let units = UnitSettings(time: .h12)
    let places = [
        Place(name: "Berlin", latitude: 52.52, longitude: 13.41, units: units),
        Place(name: "London", latitude: 51.5085, longitude: -0.1257, units: units),
        Place(name: "New York", latitude: 40.7143, longitude: -74.006, units: units),
    ]
    let telemetry = ExporterTelemetry(startedAt: fetchedAt - 600)
    telemetry.recordUpstream(provider: .openMeteo, code: "200")
    let store = WeatherStore(
        config: Config(places: places), telemetry: telemetry, telemetryPath: telemetryPath,
        now: fetchedAt, processMetrics: ProcessMetrics.page)
    let failure = WeatherFetchError("open-meteo: HTTP 503\nupstream body")
    let decoded = OpenMeteoProvider.decode(
        try TestPaths.fixtureBytes("open-meteo-forecast-multi.json"), places: places,
        forecast: ForecastSettings())
    let outcomes: [Result<WeatherSnapshot, WeatherFetchError>]
    switch state {
    case .waitingForFirstRefresh: return store
    case .ready: outcomes = decoded
    case .readyWithNewYorkFailing: outcomes = Array(decoded.prefix(2)) + [.failure(failure)]
    case .everyRefreshFailed: outcomes = places.map { _ in .failure(failure) }
    }
    store.record(zip(places, outcomes).map { (place: $0, location: nil, outcome: $1) }, at: fetchedAt)
    store.render(now: fetchedAt + 60)
    return store
}
