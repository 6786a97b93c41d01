import Logging

/// A national weather service asked for the official warnings in force at places, one place
/// per request: a `FeedSource` that the same `Feed` as the weather drives (its timer, back-off,
/// `Retry-After`, stale re-render), recording into a `WarningRecorder`. An answer that says the
/// point lies outside the service's area is a success with no warnings.
public protocol WarningSource: FeedSource where Report == [WeatherWarning] {
    var name: WarningSourceName { get }
}

extension WarningSource {
    /// `source` as a label value.
    var label: String { name.rawValue }

    /// Its feed's log lines name it as its requests are counted (`nws`, `dwd`,
    /// `met-norway-metalerts`: apart from MET Norway's forecast, `met-norway`).
    public var providerLabel: String { name.upstreamLabel }

    /// One GET through `upstream`, its answer made the place's warnings by `read`, counted in
    /// `cloudy_exporter_upstream_requests_total` under the source's `upstreamLabel` (`decode` for
    /// a 2xx that `read` refuses). None of the services has a quota to count calls against. The client
    /// sends its User-Agent (`provider.user_agent`, else Cloudy's own) on every request: NWS and
    /// MET Norway refuse requests without one.
    func get(
        _ url: String, from upstream: Upstream, accept: String = "application/json",
        headers: [(name: String, value: String)] = [],
        read: (HTTPResponse) -> Result<[WeatherWarning], WeatherFetchError>
    ) -> Result<[WeatherWarning], WeatherFetchError> {
        let request = HTTPRequest(url: url, headers: [("Accept", accept)] + headers, timeout: upstream.timeout)
        return upstream.client.fetch(
            request, countedAs: name.upstreamLabel, shownAs: label, by: upstream.recorder, read: read)
    }

    /// A refusal as the error of the place asked: the source's name, the status and `hint`.
    func refusal(
        _ response: HTTPResponse, from upstream: Upstream, explainedBy field: WeatherAPI.ErrorBodyField? = nil,
        hint: String? = nil
    ) -> WeatherFetchError {
        WeatherAPI.refusal(response, from: label, explainedBy: field, hint: hint, now: upstream.clock.now())
    }

    /// The warnings an answer's texts describe, decoded as `T`, then made warnings by `warnings`.
    func decode<T: Decodable>(
        _ type: T.Type, _ response: HTTPResponse, _ warnings: (T) -> [WeatherWarning]
    ) -> Result<[WeatherWarning], WeatherFetchError> {
        WeatherAPI.decode(type, from: response.body, as: "the \(label) answer").map(warnings)
    }
}

/// Makes every source from `warnings.sources`, each with its base URL and the refresh timeout.
public enum WarningSources {
    public static func make(
        _ settings: WarningSettings, timeout: RequestTimeout, client: CurlHTTPClient, recorder: UpstreamRecording,
        clock: ExporterClock, logger: Logger
    ) -> [any WarningSource] {
        settings.sources.map { source in
            make(source, timeout: timeout, client: client, recorder: recorder, clock: clock, logger: logger)
        }
    }

    /// The source of one entry of `warnings.sources`.
    public static func make(
        _ source: WarningSourceSettings, timeout: RequestTimeout, client: CurlHTTPClient,
        recorder: UpstreamRecording, clock: ExporterClock, logger: Logger
    ) -> any WarningSource {
        let upstream = Upstream(baseURL: source.url, limit: timeout, client: client, recorder: recorder, clock: clock)
        switch source.name {
        case .nws: return NWSWarnings(upstream)
        case .metNorway: return METNorwayWarnings(upstream, logger: logger)
        case .dwd: return DWDWarnings(upstream)
        }
    }
}
