import NIOCore
import NIOHTTP1

/// What each path answers: the table docs/endpoints.md describes.
public struct Routes: Sendable {
    public enum Endpoint: Sendable, Equatable {
        /// Answered at once from what the store rendered last (`reply(to:head:)`).
        case page(Page)
        /// Re-reads the config; answered once `reload` returns, which the handler waits for off
        /// the event loop.
        case reload

        var allowed: [HTTPMethod] {
            self == .reload ? [.POST, .PUT] : [.GET, .HEAD]
        }
    }

    public enum Page: Sendable, Equatable {
        case metrics, healthy, ready, landing, stylesheet, favicon
        /// `/places/<name>`, the name percent-decoded; a name no place has is answered 404.
        case place(String)
    }

    public let store: WeatherStore
    public let telemetryPath: String
    /// Re-reads the config; returns a failure message when the new config was refused.
    /// Blocking: the handler calls it off the event loop.
    public let reload: @Sendable () -> String?
    /// `--web.config.file`: TLS, logins, rate limit and extra headers; nil when not given.
    public let webConfig: WebConfigReloader?

    public init(
        store: WeatherStore, telemetryPath: String, webConfig: WebConfigReloader? = nil,
        reload: @escaping @Sendable () -> String?
    ) {
        self.store = store
        self.telemetryPath = telemetryPath
        self.webConfig = webConfig
        self.reload = reload
    }

    /// The path a request target names: the origin form's (`/metrics?x` → `/metrics`), or the
    /// absolute form's, which a server must accept too (`http://host:9/metrics` → `/metrics`,
    /// RFC 9112 §3.2.2). Searched as bytes: a Character search breaks the target into grapheme
    /// clusters, ~3,000 instructions of a ~65,000-instruction gzip scrape (bench/RESULTS.md).
    static func path(of target: String) -> String {
        var target = Substring(target)
        if target.utf8.first != UInt8(ascii: "/"), let scheme = target.range(of: "://"),
            isScheme(target[..<scheme.lowerBound])
        {
            // The authority ends at the path, the query or the fragment: `http://host?x` is `/`.
            let authorityAndRest = target[scheme.upperBound...]
            let end = authorityAndRest.utf8.firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            target = end.map { authorityAndRest[$0...] } ?? ""
            if target.utf8.first != UInt8(ascii: "/") { target = "/" + target }
        }
        return String(target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target)
    }

    /// Whether `text` is a URI scheme: a letter, then letters, digits, `+`, `-` or `.`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return text.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
        }
    }

    /// Why `path` cannot be `--web.telemetry-path`, or nil when it can: it must be a path a
    /// request can name as written (no query, fragment, percent-escape or space) and must not be,
    /// or hide, another of Cloudy's pages.
    public static func telemetryPathProblem(_ path: String) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/".utf8)
        guard path.hasPrefix("/"), path.utf8.allSatisfy(allowed.contains) else {
            return "must be a path that starts with / and has no ?, #, % or space"
        }
        let others =
            ["/", "/healthz", "/readyz", "/-/healthy", "/-/ready", "/-/reload"]
            + [Stylesheet.path, WeatherIcons.faviconPath]
        guard !others.contains(path), !path.hasPrefix("/places/") else {
            return "must not be one of Cloudy's other pages: \(others.joined(separator: ", ")) or /places/…"
        }
        return nil
    }

    public func endpoint(for path: String) -> Endpoint? {
        switch path {
        case telemetryPath: return .page(.metrics)
        case "/healthz", "/-/healthy": return .page(.healthy)
        case "/readyz", "/-/ready": return .page(.ready)
        case "/-/reload": return .reload
        case "/": return .page(.landing)
        case Stylesheet.path: return .page(.stylesheet)
        case WeatherIcons.faviconPath: return .page(.favicon)
        default:
            guard path.hasPrefix("/places/") else { return nil }
            let segment = path.dropFirst("/places/".count)
            // Not a name: another slash (the name's own are %2F), or bytes that do not decode.
            guard !segment.contains("/"), let name = StatusViewModel.percentDecoded(segment) else {
                return .page(.place(""))
            }
            return .page(.place(name))
        }
    }
}

/// The response for one request, built without touching the channel.
struct Reply {
    var status: HTTPResponseStatus
    var headers: [(String, String)] = []
    var body: [ByteBuffer] = []
    /// The `Content-Length` when it is not the body's: the answer to HEAD of a page whose body is
    /// costly to make (the plain exposition is inflated from its gzip member) says only its length.
    var contentLength: Int?

    static func text(_ status: HTTPResponseStatus, _ text: String, extraHeaders: [(String, String)] = []) -> Reply {
        Reply(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + extraHeaders,
            body: [ByteBuffer(string: text.hasSuffix("\n") ? text : text + "\n")])
    }
}

extension Routes {
    /// Answers a page. Scrapes read only the bytes rendered at the last refresh, plus the live
    /// `process_*` tail.
    func reply(to page: Page, head: HTTPRequestHead) -> Reply {
        switch page {
        case .healthy:
            return .text(.ok, "OK")
        case .ready:
            let readiness = store.rendered.readiness
            return .text(readiness.notReadyReason == nil ? .ok : .serviceUnavailable, readiness.answer)
        case .landing:
            return Reply(status: .ok, headers: HTMLPages.headers, body: [store.rendered.html.landing])
        case .place(let name):
            let html = store.rendered.html
            guard let page = html.places[name] else {
                return Reply(status: .notFound, headers: HTMLPages.headers, body: [html.notFound])
            }
            return Reply(status: .ok, headers: HTMLPages.headers, body: [page])
        case .stylesheet:
            return Reply(status: .ok, headers: [("Content-Type", "text/css; charset=utf-8")], body: [Stylesheet.body])
        case .favicon:
            return Reply(status: .ok, headers: [("Content-Type", "image/svg+xml")], body: [WeatherIcons.favicon])
        case .metrics:
            return metrics(head: head)
        }
    }

    private func metrics(head: HTTPRequestHead) -> Reply {
        let rendered = store.rendered.metrics
        let format = ExpositionFormat.negotiate(accept: Self.list(head.headers, "accept"))
        let gzip = Self.acceptsGzip(Self.list(head.headers, "accept-encoding"))
        let headers = Self.metricsHeaders[format == .prometheus ? 0 : 1][gzip ? 1 : 0]
        if head.method == .HEAD {
            return Reply(status: .ok, headers: headers, contentLength: rendered.scrapeLength(format, gzip: gzip))
        }
        return Reply(status: .ok, headers: headers, body: rendered.scrapeBody(format, gzip: gzip))
    }

    /// A list header (`name` in lowercase) as one list: lines of it that a client repeats are
    /// one list joined by commas (RFC 9110 §5.3). One line, as clients send, is used as it is.
    static func list(_ headers: HTTPHeaders, _ name: String) -> String? {
        var first: String?
        var more: [String] = []  // empty, as it mostly stays, it allocates nothing: this is each scrape
        for (field, value) in headers
        where field.utf8.count == name.utf8.count && field[...].equalsIgnoringCase(name) {
            if first == nil { first = value } else { more.append(value) }
        }
        guard let first, !more.isEmpty else { return first }
        return ([first] + more).joined(separator: ", ")
    }

    /// The headers of a `/metrics` answer, by format (prometheus, openMetrics) and gzip (no, yes):
    /// built once, not per scrape.
    static let metricsHeaders: [[[(String, String)]]] = [ExpositionFormat.prometheus, .openMetrics].map { format in
        let headers = [("Content-Type", format.contentType), ("Vary", "Accept-Encoding, Accept")]
        return [headers, headers + [("Content-Encoding", "gzip")]]
    }

    /// True when `Accept-Encoding` gives gzip a q above 0: its own entry's, else `*`'s (which
    /// stands for the codings not listed, RFC 9110 §12.5.3, so `gzip;q=0, *` refuses gzip).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        if header == "gzip" { return true }  // what Prometheus sends: no list to read
        var gzip: Double?
        var any: Double?
        for (coding, q) in QualityList(header) {
            if coding.equalsIgnoringCase("gzip") {
                gzip = max(gzip ?? 0, q)
            } else if coding.utf8.elementsEqual("*".utf8) {
                any = max(any ?? 0, q)
            }
        }
        return (gzip ?? any ?? 0) > 0
    }
}
