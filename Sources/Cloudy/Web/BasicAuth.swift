import NIOConcurrencyHelpers

/// `basic_auth_users`: reads `Authorization: Basic …`, checks the password with bcrypt, and
/// remembers the outcome per (user, password) pair (`LoginCache`). An unknown user is checked
/// against a dummy hash of the same cost, so it takes as long as a wrong password; a password
/// with bytes that are not UTF-8 is checked as the bytes it is.
final class BasicAuth: Sendable {
    enum Outcome: Sendable {
        case verified
        case refused
        /// Not in the cache: bcrypt must run (tens of milliseconds), away from the event loop.
        case needsBcrypt(@Sendable () -> Bool)
    }

    let users: [String: String]
    let dummyHash: String
    let cache: LoginCache
    /// One bcrypt at a time, as in the toolkit: a flood of wrong logins takes one core, not all.
    private static let bcryptLock = NIOLock()

    init(users: [String: String], dummyHash: String, cache: LoginCache = LoginCache()) {
        self.users = users
        self.dummyHash = dummyHash
        self.cache = cache
    }

    /// The cost the dummy hash needs: the highest among the users', so no unknown user is
    /// answered faster than a known one.
    static func dummyCost(_ users: [String: String]) -> Int {
        users.values.compactMap(Bcrypt.cost(of:)).max() ?? 10
    }

    func check(authorization header: String?) -> Outcome {
        guard let (user, password) = Self.credentials(header) else { return .refused }
        let key = cache.key(user: user, password: password)
        if let known = cache.outcome(key) { return known ? .verified : .refused }
        let name = String(validating: user, as: UTF8.self)
        let hash = name.flatMap { users[$0] }
        let (dummy, cache) = (dummyHash, self.cache)
        return .needsBcrypt {
            let matches = Self.bcryptLock.withLock { Bcrypt.verify(password: password, hash: hash ?? dummy) }
            let verified = matches && hash != nil
            cache.remember(key, verified: verified)
            return verified
        }
    }

    /// The user and password bytes of `Basic <base64 of user:password>`; nil for anything else
    /// (another scheme, bad base64, no colon). Read byte by byte: this runs on every request, and
    /// Foundation's trimming and base64 cost more than the rest of a cached login together.
    static func credentials(_ header: String?) -> (user: [UInt8], password: [UInt8])? {
        guard let header else { return nil }
        let bytes = Array(header.utf8)
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        while start < bytes.count, isBlank(bytes[start]) { start += 1 }
        var end = bytes.count
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        let scheme: [UInt8] = [0x62, 0x61, 0x73, 0x69, 0x63]  // "basic", compared without case
        guard end - start > scheme.count + 1, bytes[start + scheme.count] == UInt8(ascii: " ") else { return nil }
        for offset in 0..<scheme.count where bytes[start + offset] | 0x20 != scheme[offset] { return nil }
        start += scheme.count + 1
        while start < end, isBlank(bytes[start]) { start += 1 }
        guard let decoded = base64Decoded(bytes[start..<end]), let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        return (Array(decoded[..<colon]), Array(decoded[(colon + 1)...]))
    }

    /// Standard base64 (RFC 4648 §4) with its padding, as `Authorization: Basic` carries it;
    /// nil for anything else.
    static func base64Decoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var index = text.startIndex
        while index < text.endIndex {
            var quad: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = text[index + offset]
                let value: UInt8
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
                case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
                case UInt8(ascii: "+"): value = 62
                case UInt8(ascii: "/"): value = 63
                case UInt8(ascii: "=") where index + 4 == text.endIndex && offset >= 2:
                    value = 0
                    padding += 1
                default: return nil
                }
                // Nothing but padding after the first "=".
                if padding > 0, byte != UInt8(ascii: "=") { return nil }
                quad = quad << 6 | UInt32(value)
            }
            out.append(UInt8(truncatingIfNeeded: quad >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: quad >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: quad)) }
            index += 4
        }
        return out
    }
}
