import NIOSSL

/// `--web.config.file`, read: the exporter-toolkit `web-config.yml` (TLS, mutual TLS, basic
/// auth, extra response headers, a rate limit) plus Cloudy's opt-in `auth_excluded_paths`.
/// docs/web-config.md describes each key; `WebConfigLoader` reads the file strictly.
public struct WebConfig: Sendable {
    /// nil serves plain HTTP.
    public var tls: TLSSettings?
    /// `http_server_config.headers`: added to every answer; only the names the toolkit allows.
    public var headers: [(String, String)] = []
    /// `basic_auth_users`: user → bcrypt hash. Empty: no login asked.
    public var users: [String: String] = [:]
    public var rateLimit: RateLimit?
    /// Paths answered without a login even when users are configured: only liveness endpoints.
    public var authExcludedPaths: Set<String> = []

    public init() {}

    public struct RateLimit: Sendable, Equatable {
        /// One request's worth of tokens comes back every `interval` seconds…
        public var interval: Double
        /// …up to `burst` requests at once. 0: every request is answered 429, as the toolkit's
        /// limiter does.
        public var burst: Int

        /// `interval: 0`: no limit at all, as in the toolkit (which then builds no limiter).
        public var isOff: Bool { interval == 0 }
    }

    /// Go's `crypto/tls` client-auth policies, under the toolkit's names.
    public enum ClientAuth: String, Sendable, CaseIterable {
        case noClientCert = "NoClientCert"
        case requestClientCert = "RequestClientCert"
        case requireAnyClientCert = "RequireAnyClientCert"
        case verifyClientCertIfGiven = "VerifyClientCertIfGiven"
        case requireAndVerifyClientCert = "RequireAndVerifyClientCert"

        var requiresCertificate: Bool { self == .requireAnyClientCert || self == .requireAndVerifyClientCert }
        var verifiesCertificate: Bool { self == .verifyClientCertIfGiven || self == .requireAndVerifyClientCert }
    }

    public struct TLSSettings: @unchecked Sendable {
        // NIOSSLCertificate and NIOSSLPrivateKey are immutable once read.
        public var certificateChain: [NIOSSLCertificate]
        public var privateKey: NIOSSLPrivateKey
        public var clientAuth: ClientAuth = .noClientCert
        public var clientCAs: [NIOSSLCertificate] = []
        /// `client_allowed_sans`: the client certificate must carry one of these (DNS, e-mail,
        /// IP or URI). Empty: any.
        public var clientAllowedSANs: [String] = []
        public var minimumVersion: TLSVersion = .tlsv12
        public var maximumVersion: TLSVersion = .tlsv13
        /// TLS 1.2 suites in preference order; nil keeps BoringSSL's defaults. (TLS 1.3 suites
        /// are not configurable, in Go as in BoringSSL.)
        public var cipherSuites: [NIOTLSCipher]?
        public var curves: [NIOTLSCurve]?
        /// Files whose change means a re-read: the certificate, key and client CA files.
        public var files: [String] = []
        /// The context `TLSServerConfigLoader` built to check the key against the certificate; the
        /// server uses it rather than building another.
        var context: NIOSSLContext?
    }

    /// Files whose change means a re-read, besides the web config itself.
    var referencedFiles: [String] { tls?.files ?? [] }
}

extension WebConfig {
    /// One line for `--config.check`: what the web config turns on, never a secret.
    public var summary: String {
        var parts: [String] = []
        if let tls {
            parts.append("TLS, client certificates: \(tls.clientAuth.rawValue)")
        } else {
            parts.append("plain HTTP")
        }
        parts.append(users.isEmpty ? "no login" : "\(users.count) basic-auth user\(users.count == 1 ? "" : "s")")
        if let rateLimit {
            parts.append(
                rateLimit.isOff
                    ? "no rate limit (interval 0)"
                    : "rate limit \(rateLimit.burst) per \(PrometheusDuration.format(rateLimit.interval))")
        }
        if !authExcludedPaths.isEmpty { parts.append("open: \(authExcludedPaths.sorted().joined(separator: ", "))") }
        return parts.joined(separator: ", ")
    }
}
