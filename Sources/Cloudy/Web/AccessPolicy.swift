import NIOHTTP1

/// What a web config asks of every request, in the toolkit's order: the rate limit (429), then
/// the login (401 with `WWW-Authenticate: Basic`; 503 when too many logins wait for bcrypt); the
/// extra headers go on every answer, refusals included. `auth_excluded_paths` may open only the
/// liveness endpoints.
final class AccessPolicy: Sendable {
    enum Decision {
        case allow
        case refuse(Reply)
        /// bcrypt must run first; true lets the request through.
        case verify(@Sendable () -> Bool)
    }

    static let realm = "cloudy_exporter"

    let headers: [(String, String)]
    let auth: BasicAuth?
    let rateLimit: TokenBucket?
    let openPaths: Set<String>

    init(headers: [(String, String)], auth: BasicAuth?, rateLimit: TokenBucket?, openPaths: Set<String>) {
        self.headers = headers
        self.auth = auth
        self.rateLimit = rateLimit
        self.openPaths = openPaths.filter(WebConfigLoader.excludablePaths.contains)
    }

    func admit(path: String, authorization: String?) -> Decision {
        if let rateLimit, !rateLimit.take() {
            return .refuse(.text(.tooManyRequests, "429 too many requests"))
        }
        guard let auth, !openPaths.contains(path) else { return .allow }
        switch auth.check(authorization: authorization) {
        case .verified: return .allow
        case .refused: return .refuse(Self.unauthorized())
        case .needsBcrypt(let check): return .verify(check)
        case .busy: return .refuse(Self.busy())
        }
    }

    /// Too many logins not in the cache wait for bcrypt (`LoginCheckQueue`): answered at once
    /// rather than queued behind them. Logins already verified are still let in.
    static func busy() -> Reply {
        .text(
            .serviceUnavailable, "503 too many logins waiting to be checked; try again shortly",
            extraHeaders: [("Retry-After", "1")])
    }

    static func unauthorized() -> Reply {
        .text(
            .unauthorized, "401 unauthorized",
            extraHeaders: [("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\"")])
    }
}
