import Logging

/// A weather API. Each provider decodes into the same `WeatherSnapshot`, so metric names and
/// meanings never depend on where the data came from; a variable a provider lacks stays nil.
/// The weather feed's source (`FeedSource`): `fetch` asks every place, in as few upstream
/// requests as the API allows, never more at once than it tolerates.
public protocol WeatherProvider: FeedSource where Report == WeatherSnapshot {
    var name: ProviderName { get }
}

extension WeatherProvider {
    public var providerLabel: String { name.rawValue }
}

/// Why a place got no fresh weather in a refresh. `description` is what the log, `/readyz`
/// and the landing page say; it never carries an API key.
public struct WeatherFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Seconds the provider asked us to wait (Retry-After), if it did.
    public var retryAfter: Double?
    /// The provider refused for its rate limit (429): no more requests to it in this refresh.
    public var isRateLimit: Bool
    /// What kind of failure it was: what the refresh does next depends on it.
    public var cause: Cause
    /// False when the place was not asked at all (an earlier refusal in the refresh stopped it,
    /// or the exporter cancelled its request on shutdown).
    public var wasAsked: Bool
    /// What the provider counts for this place's share of the request when that is not the
    /// place's full weight: Open-Meteo counts a request answered with an HTTP error as one
    /// call, whatever its places and variables (nil: the full weight).
    public var calls: Double?
    /// When the refused quota window starts afresh (unix seconds), where the answer says so
    /// apart from the calendar: Pirate Weather's `RateLimit-Reset` counts to the key's own
    /// monthly reset. Nil: the window's calendar turn (`QuietPeriod.lift(after:now:)`).
    public var windowResetsAt: Double?

    /// The kinds of failure the refresh treats apart.
    public enum Cause: Sendable, Equatable {
        /// A 5xx, a timeout, an answer that does not decode, an unexplained 429, …
        case other
        /// The API was never reached: DNS, connect or TLS failed.
        case network
        /// The provider refused for its quota: the window its answer named (Open-Meteo's
        /// minutely, hourly, daily limits), or nil when it named none (OpenWeatherMap's block).
        case quota(QuotaWindow?)
        /// HTTP 400: the request itself is wrong, a config problem that asking again won't fix.
        case badRequest
    }

    public init(
        _ message: String, retryAfter: Double? = nil, isRateLimit: Bool = false, cause: Cause = .other,
        wasAsked: Bool = true
    ) {
        self.message = message
        self.retryAfter = retryAfter
        self.isRateLimit = isRateLimit
        self.cause = cause
        self.wasAsked = wasAsked
    }

    /// An exchange with `provider` that got no HTTP answer: `<provider>: <why> (<kind>)`.
    /// DNS, connect and TLS failures are `.network`: nothing reached the API. A request the
    /// shutdown kept from going out counts as not asked; one it cut short was asked.
    public static func unanswered(_ provider: String, _ error: HTTPClientError) -> WeatherFetchError {
        let reachedNoAPI: Set<HTTPClientError.Kind> = [.connect, .tls]
        return WeatherFetchError(
            "\(provider): \(error.message) (\(error.kind.rawValue))",
            cause: reachedNoAPI.contains(error.kind) ? .network : .other, wasAsked: error.kind != .notSent)
    }

    /// The same error for a place the refresh did not ask because of this one.
    public func notAsked(_ message: String) -> WeatherFetchError {
        var error = WeatherFetchError(
            message, retryAfter: retryAfter, isRateLimit: isRateLimit, cause: cause, wasAsked: false)
        error.windowResetsAt = windowResetsAt
        return error
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
    /// reached it. Its answer is made a result by `read`. A success status
    /// (2xx) whose answer `read` refuses is counted as `decode`, not as its status: the request
    /// was answered, but nothing could be read from it. A client error (4xx) that `read` takes as
    /// an answer, a warning service's own word for a point outside its area (NWS's and Bright
    /// Sky's 404, MetAlerts' 422), is counted as `outside_area`, so that the same status from a
    /// wrong `url:` still counts as a failure. A failure without an answer starts with
    /// `shownAs` when the messages name the upstream otherwise than its count does.
    func fetch<Value>(
        _ request: HTTPRequest, countedAs provider: String, shownAs shown: String? = nil,
        by recorder: UpstreamRecording,
        calls: Double? = nil, read: (HTTPResponse) -> Result<Value, WeatherFetchError>
    ) -> Result<Value, WeatherFetchError> {
        switch fetch(request) {
        case .failure(let error):
            recorder.recordUpstream(provider: provider, code: error.kind.rawValue)
            if let calls, error.kind.mayHaveReachedProvider { recorder.recordCalls(provider: provider, calls: calls) }
            return .failure(.unanswered(shown ?? provider, error))
        case .success(let response):
            let outcome = read(response)
            var code = String(response.status)
            switch outcome {
            case .failure where (200..<300).contains(response.status): code = "decode"
            case .success where (400..<500).contains(response.status): code = "outside_area"
            default: break
            }
            recorder.recordUpstream(provider: provider, code: code)
            if let calls { recorder.recordCalls(provider: provider, calls: calls) }
            return outcome
        }
    }
}
