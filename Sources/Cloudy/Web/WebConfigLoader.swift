import Foundation
import Yams

/// Reads a `web-config.yml` strictly, as `ConfigLoader` reads `cloudy.yml`: an unknown key, a
/// file that cannot be read, a key that does not match its certificate, a bad bcrypt hash or an
/// unknown TLS version is a `ConfigError` naming the field. Relative paths are read from the
/// web config's own directory, as the toolkit does. Messages never hold a password, a hash or
/// a private key. `tls_server_config` is read by `TLSServerConfigLoader`; the rest here.
public enum WebConfigLoader {
    static let topLevelKeys = [
        "tls_server_config", "http_server_config", "basic_auth_users", "rate_limit", "auth_excluded_paths",
    ]
    /// The only paths `auth_excluded_paths` may open: liveness, which probes and load balancers
    /// ask without credentials. `/metrics`, `/`, `/readyz` and `/-/reload` never.
    public static let excludablePaths = ["/healthz", "/-/healthy"]

    /// The headers the toolkit lets a web config add, with the values it allows (nil: any).
    static let allowedHeaders: [(name: String, values: [String]?)] = [
        ("Strict-Transport-Security", nil),
        ("X-Content-Type-Options", ["nosniff"]),
        ("X-Frame-Options", ["deny", "sameorigin"]),
        ("X-XSS-Protection", nil),
        ("Content-Security-Policy", nil),
    ]

    public static func load(file path: String) throws(ConfigError) -> WebConfig {
        let text = try ConfigLoader.text(of: path, named: "the web config file")
        let directory = (path as NSString).deletingLastPathComponent
        return try parse(yaml: text, file: path, directory: directory.isEmpty ? "." : directory)
    }

    public static func parse(yaml: String, file: String? = nil, directory: String = ".") throws(ConfigError)
        -> WebConfig
    {
        let root: Node?
        do {
            root = try YAMLMapping.compose(yaml)
        } catch {
            throw YAMLMapping.syntaxError(error, file: file)
        }
        var config = WebConfig()
        // An empty file is a valid web config that changes nothing, as in the toolkit.
        guard let root else { return config }
        let document = try YAMLMapping(root, path: "", file: file)
        try document.rejectUnknownKeys(topLevelKeys)
        if let tls = try document.mapping("tls_server_config") {
            do {
                config.tls = try TLSServerConfigLoader.read(tls, directory: directory)
            } catch {
                var refused = error
                refused.namedFiles = TLSServerConfigLoader.namedFiles(tls, directory: directory)
                throw refused
            }
        }
        if let http = try document.mapping("http_server_config") {
            try http.rejectUnknownKeys(["headers", "http2"])
            // http2 is accepted so toolkit files load; Cloudy speaks HTTP/1.1 only.
            _ = try http.bool("http2")
            if let headers = try http.mapping("headers") {
                config.headers = try self.headers(headers)
            }
        }
        if let users = try document.mapping("basic_auth_users") {
            for pair in users.pairs {
                guard let hash = try users.string(pair.key) else {
                    throw users.error(pair.key, "needs a bcrypt hash (see docs/web-config.md)")
                }
                // Any cost bcrypt allows (4 to 31), as in the toolkit; above 16 is warned about
                // (WebConfig.warnings).
                guard Bcrypt.cost(of: hash) != nil else {
                    // Never echo the value: it may be a password written in by mistake.
                    throw users.error(
                        pair.key, "is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31, 60 characters)")
                }
                if pair.key.contains(":") || pair.key.isEmpty {
                    throw users.error(pair.key, "a user name cannot be empty or hold a colon")
                }
                config.users[pair.key] = hash
            }
        }
        if let limit = try document.mapping("rate_limit") {
            try limit.rejectUnknownKeys(["interval", "burst"])
            // As in the toolkit: interval 0 turns the limit off, burst 0 refuses every request
            // (both warned about, WebConfig.warnings).
            let interval = try limit.duration("interval", atLeast: 0)
            let burst = try limit.int("burst", in: 0...1_000_000)
            switch (interval, burst) {
            case (let interval?, let burst?): config.rateLimit = .init(interval: interval, burst: burst)
            case (nil, nil): break
            case (nil, _): throw limit.error("interval", "is required with burst (e.g. interval: 1s)")
            case (_, nil): throw limit.error("burst", "is required with interval (e.g. burst: 10)")
            }
        }
        if let paths = try document.sequence("auth_excluded_paths") {
            for item in paths.items {
                guard case .scalar(let scalar) = item, excludablePaths.contains(scalar.string) else {
                    throw paths.error(
                        "may list only \(excludablePaths.joined(separator: " and ")); "
                            + "every other endpoint always asks for the login")
                }
                config.authExcludedPaths.insert(scalar.string)
            }
            if !config.authExcludedPaths.isEmpty, config.users.isEmpty {
                throw document.error("auth_excluded_paths", "has no effect without basic_auth_users")
            }
        }
        return config
    }

    private static func headers(_ map: YAMLMapping) throws(ConfigError) -> [(String, String)] {
        var out: [(String, String)] = []
        for pair in map.pairs {
            guard let allowed = allowedHeaders.first(where: { $0.name.lowercased() == pair.key.lowercased() }) else {
                let names = allowedHeaders.map(\.name).joined(separator: ", ")
                throw map.error(pair.key, "this header cannot be configured (allowed: \(names))")
            }
            guard let value = try map.string(pair.key), !value.isEmpty else {
                throw map.error(pair.key, "needs a value")
            }
            if let values = allowed.values, !values.contains(value) {
                throw map.error(pair.key, "must be one of \(values.joined(separator: ", ")), found \"\(value)\"")
            }
            guard ConfigLoader.isOneLineOfText(value) else {
                throw map.error(pair.key, "holds a control character")
            }
            out.append((allowed.name, value))
        }
        return out
    }
}
