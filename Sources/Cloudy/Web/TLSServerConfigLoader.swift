import Foundation
import NIOSSL

/// Reads `tls_server_config` of a web config strictly, as the toolkit's `ConfigToTLSConfig` does
/// and no looser: the server's certificate and key (files or inline), the client-certificate
/// policy with its CA and allowed SANs, and the protocol options (versions, suites, curves). The
/// key is checked against the certificate by building the `NIOSSLContext` the server then uses.
enum TLSServerConfigLoader {
    static let keys = [
        "cert_file", "key_file", "cert", "key", "client_ca", "client_ca_file", "client_auth_type",
        "client_allowed_sans", "min_version", "max_version", "cipher_suites", "curve_preferences",
        "prefer_server_cipher_suites",
    ]
    /// Go's names for the suites `crypto/tls` calls secure, all of which BoringSSL offers.
    static let cipherSuites: [String: NIOTLSCipher] = [
        "TLS_RSA_WITH_AES_128_CBC_SHA": .TLS_RSA_WITH_AES_128_CBC_SHA,
        "TLS_RSA_WITH_AES_256_CBC_SHA": .TLS_RSA_WITH_AES_256_CBC_SHA,
        "TLS_RSA_WITH_AES_128_GCM_SHA256": .TLS_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_RSA_WITH_AES_256_GCM_SHA384": .TLS_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": .TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": .TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": .TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": .TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ]
    /// TLS 1.3's suites: Go accepts their names and ignores them (1.3 suites are not
    /// configurable); so does Cloudy.
    static let tls13Suites = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]

    static let curves: [(name: String, curve: NIOTLSCurve)] = [
        ("CurveP256", .secp256r1), ("CurveP384", .secp384r1), ("CurveP521", .secp521r1), ("X25519", .x25519),
        ("X25519MLKEM768", .x25519_MLKEM768),
    ]

    enum Version: String, CaseIterable {
        case tls12 = "TLS12"
        case tls13 = "TLS13"

        var nio: TLSVersion { self == .tls12 ? .tlsv12 : .tlsv13 }
    }

    /// nil when no TLS key is set (plain HTTP, as in the toolkit).
    static func read(_ map: YAMLMapping, directory: String) throws(ConfigError) -> WebConfig.TLSSettings? {
        try map.rejectUnknownKeys(keys)
        let certFile = try map.string("cert_file").map { resolve($0, directory) }
        let keyFile = try map.string("key_file").map { resolve($0, directory) }
        let caFile = try map.string("client_ca_file").map { resolve($0, directory) }
        let certText = try map.string("cert")
        let keyText = try map.string("key")
        let caText = try map.string("client_ca")
        let authName = try map.string("client_auth_type")
        if certFile == nil, certText == nil, keyFile == nil, keyText == nil, caFile == nil, caText == nil,
            authName == nil
        {
            return nil  // as in the toolkit: nothing TLS set means plain HTTP
        }
        if certFile != nil, certText != nil { throw map.error("cert", "give cert or cert_file, not both") }
        if keyFile != nil, keyText != nil { throw map.error("key", "give key or key_file, not both") }
        if caFile != nil, caText != nil { throw map.error("client_ca", "give client_ca or client_ca_file, not both") }

        let chain: [NIOSSLCertificate]
        if let certFile {
            chain = try certificates(map, "cert_file", bytes: try read(map, "cert_file", certFile))
        } else if let certText {
            chain = try certificates(map, "cert", bytes: Array(certText.utf8))
        } else {
            throw map.error("cert_file", "is required for TLS (or give cert inline)")
        }
        let key: NIOSSLPrivateKey
        let keyField = keyFile != nil ? "key_file" : "key"
        do {
            if let keyFile {
                key = try NIOSSLPrivateKey(bytes: try read(map, "key_file", keyFile), format: .pem)
            } else if let keyText {
                key = try NIOSSLPrivateKey(bytes: Array(keyText.utf8), format: .pem)
            } else {
                throw map.error("key_file", "is required for TLS (or give key inline)")
            }
        } catch let error as ConfigError {
            throw error
        } catch {
            throw map.error(keyField, "is not a PEM private key")
        }
        var settings = WebConfig.TLSSettings(certificateChain: chain, privateKey: key)
        settings.files = namedFiles(map, directory: directory)
        if let caFile {
            settings.clientCAs = try certificates(map, "client_ca_file", bytes: try read(map, "client_ca_file", caFile))
        } else if let caText {
            settings.clientCAs = try certificates(map, "client_ca", bytes: Array(caText.utf8))
        }
        let caField = caFile != nil ? "client_ca_file" : "client_ca"
        try clientAuthentication(map, authName, caField: caField, into: &settings)
        try protocolOptions(map, into: &settings)
        // The key must match the certificate: BoringSSL checks when the context is built. The
        // server then serves with this context.
        do {
            settings.context = try ServerTLS.makeContext(settings)
        } catch {
            throw map.error(keyField, "does not match the certificate, or TLS cannot use it: \(error)")
        }
        return settings
    }

    /// `client_auth_type` and `client_allowed_sans`, checked against the client CA already read.
    private static func clientAuthentication(
        _ map: YAMLMapping, _ authName: String?, caField: String, into settings: inout WebConfig.TLSSettings
    ) throws(ConfigError) {
        if let authName {
            // RequireClientCert: the toolkit's old name for RequireAnyClientCert, still accepted there.
            guard
                let auth = WebConfig.ClientAuth(
                    rawValue: authName == "RequireClientCert" ? "RequireAnyClientCert" : authName)
            else {
                let allowed = WebConfig.ClientAuth.allCases.map(\.rawValue).joined(separator: ", ")
                throw map.error("client_auth_type", "unknown value \"\(authName)\" (one of: \(allowed))")
            }
            settings.clientAuth = auth
        }
        if !settings.clientCAs.isEmpty, settings.clientAuth == .noClientCert {
            throw map.error(caField, "a client CA needs a client_auth_type that asks for a certificate")
        }
        // VerifyClientCertIfGiven without a client CA verifies against the system's trust store,
        // as Go does (warned about); RequireAndVerifyClientCert still needs the CA.
        if settings.clientAuth == .requireAndVerifyClientCert, settings.clientCAs.isEmpty {
            throw map.error(
                "client_auth_type",
                "\(settings.clientAuth.rawValue) needs client_ca_file (or client_ca) to verify against")
        }
        if let sans = try map.sequence("client_allowed_sans") {
            for item in sans.items {
                guard case .scalar(let scalar) = item, !scalar.string.isEmpty else {
                    throw sans.error("list items must be names (DNS, e-mail, IP or URI)")
                }
                settings.clientAllowedSANs.append(scalar.string)
            }
            if !settings.clientAuth.requiresCertificate {
                throw map.error(
                    "client_allowed_sans",
                    "needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert")
            }
        }
    }

    /// `min_version`, `max_version`, `cipher_suites`, `prefer_server_cipher_suites`, `curve_preferences`.
    private static func protocolOptions(_ map: YAMLMapping, into settings: inout WebConfig.TLSSettings)
        throws(ConfigError)
    {
        let minimum = try version(map, "min_version") ?? .tls12
        let maximum = try version(map, "max_version") ?? .tls13
        if minimum == .tls13, maximum == .tls12 {
            throw map.error("min_version", "TLS13 is above max_version TLS12")
        }
        settings.minimumVersion = minimum.nio
        settings.maximumVersion = maximum.nio
        if let suites = try map.sequence("cipher_suites") {
            var chosen: [NIOTLSCipher] = []
            for item in suites.items {
                guard case .scalar(let scalar) = item else { throw suites.error("list items must be suite names") }
                if tls13Suites.contains(scalar.string) { continue }
                guard let suite = cipherSuites[scalar.string] else {
                    throw suites.error(
                        "\"\(scalar.string)\" is not a suite this server offers (Go names: "
                            + cipherSuites.keys.sorted().joined(separator: ", ") + ")")
                }
                if !chosen.contains(suite) { chosen.append(suite) }
            }
            if chosen.isEmpty, minimum == .tls12 {
                throw suites.error("lists no TLS 1.2 suite; list one, or set min_version: TLS13")
            }
            settings.cipherSuites = chosen.isEmpty ? nil : chosen
        }
        _ = try map.bool("prefer_server_cipher_suites")  // BoringSSL servers prefer their own order
        if let list = try map.sequence("curve_preferences") {
            var chosen: [NIOTLSCurve] = []
            for item in list.items {
                guard case .scalar(let scalar) = item, let curve = curves.first(where: { $0.name == scalar.string })
                else {
                    throw list.error(
                        "unknown curve (one of: \(curves.map(\.name).joined(separator: ", ")))")
                }
                if !chosen.contains(curve.curve) { chosen.append(curve.curve) }
            }
            settings.curves = chosen.isEmpty ? nil : chosen
        }
    }

    private static func version(_ map: YAMLMapping, _ key: String) throws(ConfigError) -> Version? {
        guard let text = try map.string(key) else { return nil }
        if text == "TLS10" || text == "TLS11" {
            throw map.error(key, "\(text) is not offered; TLS12 and TLS13 are")
        }
        guard let version = Version(rawValue: text) else {
            throw map.error(key, "unknown TLS version \"\(text)\" (TLS12 or TLS13)")
        }
        return version
    }

    /// The files `map` names (`cert_file`, `key_file`, `client_ca_file`), as read.
    static func namedFiles(_ map: YAMLMapping, directory: String) -> [String] {
        ["cert_file", "key_file", "client_ca_file"].compactMap { key in
            (try? map.string(key))?.map { resolve($0, directory) }
        }
    }

    private static func resolve(_ path: String, _ directory: String) -> String {
        path.hasPrefix("/") ? path : (directory as NSString).appendingPathComponent(path)
    }

    private static func read(_ map: YAMLMapping, _ key: String, _ path: String) throws(ConfigError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw map.error(key, "cannot read \(path)")
        }
        return Array(data)
    }

    private static func certificates(_ map: YAMLMapping, _ key: String, bytes: [UInt8]) throws(ConfigError)
        -> [NIOSSLCertificate]
    {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch {
            throw map.error(key, "is not PEM certificates")
        }
        guard !chain.isEmpty else { throw map.error(key, "holds no PEM certificate") }
        return chain
    }
}
