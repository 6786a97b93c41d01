import NIOConcurrencyHelpers

/// Where and how a provider asks: the API's base URL, each exchange's timeout, the HTTP client,
/// the recorder that counts exchanges, and the clock that times the provider's caches and reads
/// `Retry-After` dates. Every provider is built with one.
public struct Upstream: Sendable {
    public let baseURL: String
    /// `refresh.timeout` as it is now: read at each request, so a reload that changes it needs no
    /// new provider (which would lose its caches, MET Norway's `Expires`, OpenWeatherMap's spacing).
    public var timeout: Double { limit.seconds }
    public let limit: RequestTimeout
    public let client: CurlHTTPClient
    public let recorder: UpstreamRecording
    public let clock: ExporterClock

    /// An upstream whose timeout stays `timeout`.
    public init(
        baseURL: String, timeout: Double, client: CurlHTTPClient, recorder: UpstreamRecording,
        clock: ExporterClock = SystemClock()
    ) {
        self.init(baseURL: baseURL, limit: RequestTimeout(timeout), client: client, recorder: recorder, clock: clock)
    }

    /// An upstream whose timeout is `limit`'s, which its feed sets on a reload.
    public init(
        baseURL: String, limit: RequestTimeout, client: CurlHTTPClient, recorder: UpstreamRecording,
        clock: ExporterClock = SystemClock()
    ) {
        self.baseURL = baseURL
        self.limit = limit
        self.client = client
        self.recorder = recorder
        self.clock = clock
    }
}

/// The limit for one exchange, `refresh.timeout`, shared by a feed's sources: the feed sets it
/// on a reload, and the next request takes it.
public final class RequestTimeout: Sendable {
    private let value: NIOLockedValueBox<Double>

    public init(_ seconds: Double) {
        value = NIOLockedValueBox(seconds)
    }

    public var seconds: Double {
        get { value.withLockedValue { $0 } }
        set { value.withLockedValue { $0 = newValue } }
    }
}

/// A provider's `Upstream`, with the name its exchanges are counted under.
struct UpstreamEndpoint: Sendable {
    /// The weather provider's name, or an air-quality source's (`open-meteo-air-quality`, …).
    let name: String
    let upstream: Upstream
    /// Whose quota the calls spend, when not `name`'s own (the air-quality API's calls are
    /// Open-Meteo's): the calls are counted under that name, so the page shows the sum.
    let quotaOwner: String?

    init(provider: ProviderName, upstream: Upstream) {
        self.init(name: provider.rawValue, upstream: upstream)
    }

    init(name: String, upstream: Upstream, quotaOwner: ProviderName? = nil) {
        self.name = name
        self.upstream = upstream
        self.quotaOwner = quotaOwner?.rawValue
    }

    var baseURL: String { upstream.baseURL }
    var client: CurlHTTPClient { upstream.client }
    var recorder: UpstreamRecording {
        quotaOwner.map { CallsCountedAs(owner: $0, recorder: upstream.recorder) } ?? upstream.recorder
    }
    var clock: ExporterClock { upstream.clock }

    /// A GET of `url` asking for JSON, with `headers` after the `Accept`.
    func request(_ url: String, headers: [(name: String, value: String)] = []) -> HTTPRequest {
        HTTPRequest(url: url, headers: [("Accept", "application/json")] + headers, timeout: upstream.timeout)
    }

    /// One exchange, its answer made a result by `read`: counted with its HTTP status (`decode`
    /// for a 2xx that `read` refuses) or, when there was no answer, its error kind, and as one
    /// call against the provider's quota when it may have reached the provider.
    func fetch<Value>(
        _ request: HTTPRequest, read: (HTTPResponse) -> Result<Value, WeatherFetchError>
    ) -> Result<Value, WeatherFetchError> {
        client.fetch(request, countedAs: name, by: recorder, calls: 1, read: read)
    }

    /// Counts `calls` against the provider's quota unless the exchange never reached it.
    func recordCalls(_ calls: Double, for outcome: Result<HTTPResponse, HTTPClientError>) {
        if case .failure(let error) = outcome, !error.kind.mayHaveReachedProvider { return }
        recorder.recordCalls(provider: name, calls: calls)
    }
}

/// A recorder that counts exchanges under their own name and calls under the quota owner's.
private struct CallsCountedAs: UpstreamRecording {
    let owner: String
    let recorder: UpstreamRecording

    func recordUpstream(provider: String, code: String) { recorder.recordUpstream(provider: provider, code: code) }
    func recordCalls(provider: String, calls: Double) { recorder.recordCalls(provider: owner, calls: calls) }
}
