import Logging

/// A weather API. Each provider decodes into the same `WeatherSnapshot`, so metric names and
/// meanings never depend on where the data came from; a variable a provider lacks stays nil.
public protocol WeatherProvider: Sendable {
    var name: ProviderName { get }
    /// Fetches every place, in as few upstream requests as the API allows, never more at once
    /// than it tolerates. Blocks the calling (Dispatch) thread; returns one outcome per place,
    /// in the order of `places`.
    func fetch(_ places: [Place], logger: Logger) -> [Result<WeatherSnapshot, WeatherFetchError>]
}

/// Why a place got no fresh weather in a refresh. `description` is what the log, `/readyz`
/// and the landing page say; it never carries an API key.
public struct WeatherFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Seconds the provider asked us to wait (Retry-After), if it did.
    public var retryAfter: Double?
    /// The provider refused for its rate limit (429): no more requests to it in this refresh.
    public var isRateLimit: Bool

    public init(_ message: String, retryAfter: Double? = nil, isRateLimit: Bool = false) {
        self.message = message
        self.retryAfter = retryAfter
        self.isRateLimit = isRateLimit
    }

    public var description: String { message }
}

/// Counts every upstream exchange by provider and outcome (`200`, `429`, `timeout`, …):
/// the source of `cloudy_exporter_upstream_requests_total`.
public protocol UpstreamRecording: Sendable {
    /// `provider` is a provider's name, or `geocoding` for city look-ups.
    func recordUpstream(provider: String, code: String)
    /// Adds `calls` to what `provider` counts against its quota
    /// (`cloudy_exporter_upstream_calls_total`).
    func recordCalls(provider: String, calls: Double)
}

extension UpstreamRecording {
    func recordUpstream(provider: ProviderName, code: String) {
        recordUpstream(provider: provider.rawValue, code: code)
    }
}

extension CurlHTTPClient {
    /// One upstream exchange, counted by `recorder` under `provider` with its HTTP status or,
    /// when there was no answer, its error kind; the failure message starts with `provider`.
    /// `calls` (nil: none) are counted against the provider's quota when the request may have
    /// reached it.
    func fetch(
        _ request: HTTPRequest, countedAs provider: String, by recorder: UpstreamRecording, calls: Double? = nil
    ) -> Result<HTTPResponse, WeatherFetchError> {
        switch fetch(request) {
        case .failure(let error):
            recorder.recordUpstream(provider: provider, code: error.kind.rawValue)
            if let calls, error.kind.mayHaveReachedProvider { recorder.recordCalls(provider: provider, calls: calls) }
            return .failure(WeatherFetchError("\(provider): \(error.message) (\(error.kind.rawValue))"))
        case .success(let response):
            recorder.recordUpstream(provider: provider, code: String(response.status))
            if let calls { recorder.recordCalls(provider: provider, calls: calls) }
            return .success(response)
        }
    }
}
