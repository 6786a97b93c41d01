import CCrypt

/// SHA-256 from OpenSSL's libcrypto (libcurl already links it), for the web config's cache of
/// verified logins and an API key's fingerprint in quota.json.
enum SHA256 {
    /// The 32-byte digest of `bytes`.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        let ok = bytes.withUnsafeBytes { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &size, algorithm.pointer, nil)
        }
        precondition(ok == 1 && size == 32, "SHA-256 from libcrypto failed")
        return digest
    }

    /// Fetched from OpenSSL's provider once: `EVP_sha256()` would fetch it again on every
    /// digest, which costs more than the digest of a login.
    private struct Algorithm: @unchecked Sendable {  // an immutable OpenSSL object, never freed
        let pointer: OpaquePointer?
    }
    private static let algorithm = Algorithm(pointer: EVP_MD_fetch(nil, "SHA256", nil))
}
