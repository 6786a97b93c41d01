/// Where a provider asks and with what: the API's base URL, the HTTP client and each exchange's
/// timeout, the recorder that counts exchanges under the provider's name, and the clock that
/// times the provider's caches and reads `Retry-After` dates.
struct UpstreamEndpoint: Sendable {
    let provider: ProviderName
    let baseURL: String
    let timeout: Double
    let client: CurlHTTPClient
    let recorder: UpstreamRecording
    let clock: ExporterClock

    /// A GET of `url` asking for JSON, with `headers` after the `Accept`.
    func request(_ url: String, headers: [(name: String, value: String)] = []) -> HTTPRequest {
        HTTPRequest(url: url, headers: [("Accept", "application/json")] + headers, timeout: timeout)
    }

    /// One exchange, counted with its HTTP status or, when there was no answer, its error kind.
    func fetch(_ request: HTTPRequest) -> Result<HTTPResponse, WeatherFetchError> {
        client.fetch(request, countedAs: provider.rawValue, by: recorder)
    }
}
