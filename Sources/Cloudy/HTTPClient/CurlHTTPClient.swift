import CCurl
import Foundation
import NIOConcurrencyHelpers

/// The HTTP client for weather APIs, on libcurl's easy interface. `fetch` blocks the calling
/// thread for at most the request's timeout; the refresh runs it on its own Dispatch queue.
///
/// Every exchange: only http/https (also across redirects), at most `maxRedirects` redirects,
/// TLS peer and host verification on, an identifying User-Agent, compressed transfer accepted,
/// and the decoded body capped at `maxBodyBytes` (a larger answer is abandoned as `too_large`).
/// `cancelAll()` aborts exchanges in flight, so shutdown never waits on a hung upstream.
///
/// Easy handles are kept between exchanges (up to `maxIdleHandles`), and with them libcurl's
/// open connections and TLS sessions: the next batch to the same API skips the TCP and TLS
/// handshakes (libcurl drops a connection idle for more than 118 s on its own).
public final class CurlHTTPClient: Sendable {
    /// Sent with every exchange from the next one on: a reload sets it (`Feeds.apply`).
    public var userAgent: String {
        get { agent.withLockedValue { $0 } }
        set { agent.withLockedValue { $0 = newValue } }
    }
    private let agent: NIOLockedValueBox<String>
    public let maxBodyBytes: Int
    public let maxRedirects: Int
    private let cancelled = NIOLockedValueBox(false)
    private let idleHandles = NIOLockedValueBox<[EasyHandle]>([])
    static let maxIdleHandles = 4

    /// A libcurl easy handle; only one exchange uses it at a time (it is out of `idleHandles`).
    private struct EasyHandle: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
    }

    private static let globalInit: Void = {
        _ = cloudy_curl_global_init()
    }()

    public init(userAgent: String, maxBodyBytes: Int = 32 << 20, maxRedirects: Int = 3) {
        _ = Self.globalInit
        agent = NIOLockedValueBox(userAgent)
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
    }

    /// Aborts every exchange in flight and refuses new ones until `resume()`.
    public func cancelAll() { cancelled.withLockedValue { $0 = true } }
    public func resume() { cancelled.withLockedValue { $0 = false } }
    var isCancelled: Bool { cancelled.withLockedValue { $0 } }

    deinit {
        for handle in idleHandles.withLockedValue({ $0 }) { curl_easy_cleanup(handle.raw) }
    }

    /// An idle handle (its connections still open) or a new one.
    private func takeHandle() -> EasyHandle? {
        if let idle = idleHandles.withLockedValue({ $0.popLast() }) { return idle }
        return curl_easy_init().map(EasyHandle.init)
    }

    /// Clears the handle's options (they point at this exchange's buffers) but keeps its
    /// connections, then keeps it for the next exchange, or closes it when enough are idle.
    private func giveBack(_ handle: EasyHandle) {
        curl_easy_reset(handle.raw)
        let kept = idleHandles.withLockedValue { idle in
            guard idle.count < Self.maxIdleHandles else { return false }
            idle.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle.raw) }
    }

    public func fetch(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPClientError> {
        if isCancelled { return .failure(HTTPClientError(.notSent, "the exporter is shutting down")) }
        guard let easy = takeHandle() else {
            return .failure(HTTPClientError(.network, "curl_easy_init failed"))
        }
        let handle = easy.raw
        let exchange = Exchange(client: self, cap: maxBodyBytes, isMoot: request.isMoot)
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer {
            giveBack(easy)  // first: the reset drops the handle's pointers to the buffers below
            curl_slist_free_all(headerList)
            errorBuffer.deallocate()
        }
        for header in request.headers {
            headerList = curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        let userdata = Unmanaged.passUnretained(exchange).toOpaque()
        let timeoutMs = max(1, Int(request.timeout * 1000))

        var setup = cloudy_curl_setopt_string(handle, CURLOPT_URL, request.url)
        func set(_ code: CURLcode) { if setup == CURLE_OK { setup = code } }
        set(cloudy_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        set(cloudy_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        set(cloudy_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMs))
        set(cloudy_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMs))
        set(cloudy_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(cloudy_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        set(cloudy_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, request.followRedirects ? 1 : 0))
        set(cloudy_curl_setopt_long(handle, CURLOPT_MAXREDIRS, maxRedirects))
        set(cloudy_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        set(cloudy_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        set(cloudy_curl_setopt_string(handle, CURLOPT_USERAGENT, userAgent))
        set(cloudy_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""))
        set(cloudy_curl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodyBytes)))
        set(cloudy_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
        set(cloudy_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteBody))
        set(cloudy_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata))
        set(cloudy_curl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlWriteHeader))
        set(cloudy_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata))
        set(cloudy_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0))
        set(cloudy_curl_setopt_progress_callback(handle, curlProgress))
        set(cloudy_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, userdata))
        if let body = request.body {
            set(cloudy_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            // COPYPOSTFIELDS copies the bytes (a terminating 0 keeps the pointer valid when empty).
            var bytes = body + [0]
            set(
                bytes.withUnsafeMutableBytes {
                    cloudy_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
                })
        }
        guard setup == CURLE_OK else {
            return .failure(HTTPClientError(.invalidRequest, String(cString: curl_easy_strerror(setup))))
        }

        let code = withExtendedLifetime(exchange) { curl_easy_perform(handle) }
        if code != CURLE_OK {
            let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
            var kind = Self.kind(of: code, exchange: exchange)
            var sent = 0
            let nothingSent = cloudy_curl_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK && sent == 0
            if kind == .cancelled, nothingSent {
                kind = .notSent  // cut short while connecting: nothing reached the provider
            }
            if kind == .timeout, nothingSent {
                // Out of time before the request went: the connect (packets dropped on the way)
                // or, once connected (a local port is known), the TLS handshake. The provider
                // never saw it.
                var localPort = 0
                let isConnected =
                    cloudy_curl_getinfo_long(handle, CURLINFO_LOCAL_PORT, &localPort) == CURLE_OK && localPort > 0
                kind = isConnected ? .tls : .connect
            }
            return .failure(HTTPClientError(kind, detail))
        }
        var status = 0
        _ = cloudy_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: exchange.headers, body: exchange.body))
    }

    private static func kind(of code: CURLcode, exchange: Exchange) -> HTTPClientError.Kind {
        if exchange.exceeded { return .tooLarge }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .connect
        case CURLE_FILESIZE_EXCEEDED: return .tooLarge
        case CURLE_PARTIAL_FILE: return .truncated
        case CURLE_TOO_MANY_REDIRECTS: return .redirect
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return .invalidRequest
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .tls
        default: return .network
        }
    }
}

/// The state of one exchange that libcurl's callbacks write into (through an unretained pointer
/// that `fetch` keeps alive).
final class Exchange {
    unowned let client: CurlHTTPClient
    let cap: Int
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var exceeded = false
    let isMoot: (@Sendable () -> Bool)?

    init(client: CurlHTTPClient, cap: Int, isMoot: (@Sendable () -> Bool)?) {
        self.client = client
        self.cap = cap
        self.isMoot = isMoot
    }
}

/// What both write callbacks start with: the exchange libcurl was given as user data, and the
/// bytes it hands over. `handle` returns how many it took (fewer makes libcurl stop).
private func receive(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?,
    _ handle: (Exchange, UnsafeBufferPointer<UInt8>) -> Int
) -> Int {
    guard let userdata, let data else { return 0 }
    let exchange = Unmanaged<Exchange>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    return data.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        handle(exchange, UnsafeBufferPointer(start: bytes, count: length))
    }
}

private func curlWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    receive(data, size, count, userdata) { exchange, bytes in
        if exchange.body.count + bytes.count > exchange.cap {
            exchange.exceeded = true
            return 0  // makes libcurl stop with CURLE_WRITE_ERROR
        }
        exchange.body.append(contentsOf: bytes)
        return bytes.count
    }
}

private func curlWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    receive(data, size, count, userdata) { exchange, bytes in
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            exchange.headers = [:]  // a new response (after a redirect or a 100 Continue)
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            exchange.headers[name] = value
        }
        return bytes.count
    }
}

private func curlProgress(
    _ userdata: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t
) -> Int32 {
    guard let userdata else { return 0 }
    let exchange = Unmanaged<Exchange>.fromOpaque(userdata).takeUnretainedValue()
    return exchange.client.isCancelled || exchange.isMoot?() == true ? 1 : 0
}
