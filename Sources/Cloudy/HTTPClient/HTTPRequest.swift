import Foundation

/// One upstream request: a GET, or a POST when it has a body. Headers are sent as given;
/// the client adds its User-Agent.
public struct HTTPRequest: Sendable {
    public var url: String
    public var headers: [(name: String, value: String)]
    /// Seconds the whole exchange may take.
    public var timeout: Double
    /// Sent as a POST body when not nil.
    public var body: [UInt8]?
    /// Off for requests that carry a key, so it never travels to another host.
    public var followRedirects = true
    /// Asked at libcurl's progress ticks (at least once a second while an answer is awaited):
    /// true cuts the exchange short, as a shutdown does (`cancelled`, or `not_sent` when nothing
    /// went out). For a request that became moot: a look-up at a geocoder a reload replaced.
    public var isMoot: (@Sendable () -> Bool)?

    public init(url: String, headers: [(name: String, value: String)] = [], timeout: Double = 10, body: [UInt8]? = nil)
    {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.body = body
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case; the last value wins.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `Content-Type` without its parameters, in lower case (`application/problem+json`).
    public var mediaType: String? {
        headers["content-type"]?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
    }
}

/// Why an exchange produced no HTTP response. `kind` is the `code` label of
/// `cloudy_exporter_upstream_requests_total` for failures that have no status.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case timeout
        case connect
        case tooLarge = "too_large"
        case truncated
        case tls
        case redirect
        case network
        /// Cut short by the exporter's shutdown after the request went out: the provider may
        /// have counted it.
        case cancelled
        /// Refused, or cut short before the request went out, because the exporter shuts down.
        case notSent = "not_sent"
        case invalidRequest = "invalid_request"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
