/// `basic_auth_users`: reads `Authorization: Basic …`, checks the password with bcrypt, and
/// remembers each verified (user, password) pair (`LoginCache`). Every check that is not in the
/// cache costs the same bcrypt work, whoever the user: the highest cost among the users
/// (`topCost`). A known user's hash at a lower cost is padded with bcrypt at each cost from its
/// own up to the top one (2^c + 2^c + 2^(c+1) + … + 2^(top-1) = 2^top rounds), and an unknown
/// user is checked against a dummy hash at the top cost, so neither a wrong password nor an
/// unknown name tells, by its time, which users exist or how their hashes are set. A password
/// with bytes that are not UTF-8 is checked as the bytes it is.
final class BasicAuth: Sendable {
    enum Outcome: Sendable {
        case verified
        case refused
        /// Not in the cache: bcrypt must run (tens of milliseconds), on `LoginCheckQueue`.
        case needsBcrypt(@Sendable () -> Bool)
        /// Not in the cache, and `LoginCheckQueue.maximumPending` checks already wait.
        case busy
    }

    /// Runs one bcrypt: true when `password` hashes to `hash`. `Bcrypt.verify`; tests count calls.
    typealias Verifier = @Sendable (_ password: [UInt8], _ hash: String) -> Bool

    let users: [String: String]
    let dummyHash: String
    let cache: LoginCache
    let checks: LoginCheckQueue
    /// The highest cost among the users' hashes (the dummy's cost): what every check costs.
    let topCost: Int
    private let verifier: Verifier

    init(
        users: [String: String], dummyHash: String, cache: LoginCache = LoginCache(),
        checks: LoginCheckQueue = LoginCheckQueue(),
        verifier: @escaping Verifier = { Bcrypt.verify(password: $0, hash: $1) }
    ) {
        self.users = users
        self.dummyHash = dummyHash
        self.cache = cache
        self.checks = checks
        self.verifier = verifier
        topCost = Bcrypt.cost(of: dummyHash) ?? Self.dummyCost(users)
    }

    /// The cost the dummy hash needs: the highest among the users', so no unknown user is
    /// answered faster than a known one.
    static func dummyCost(_ users: [String: String]) -> Int {
        users.values.compactMap(Bcrypt.cost(of:)).max() ?? 10
    }

    func check(authorization header: String?) -> Outcome {
        guard let (user, password) = Self.credentials(header) else { return .refused }
        let key = cache.key(user: user, password: password)
        if cache.contains(key) { return .verified }
        guard checks.enter() else { return .busy }
        let name = String(validating: user, as: UTF8.self)
        let hash = name.flatMap { users[$0] }
        return .needsBcrypt { [self] in
            defer { checks.leave() }
            let verified = verify(password: password, hash: hash)
            if verified { cache.remember(key) }
            return verified
        }
    }

    /// bcrypt against the user's hash (the dummy's for an unknown user), then padding up to
    /// `topCost`: the same work for every user, known or not, right or wrong.
    func verify(password: [UInt8], hash: String?) -> Bool {
        let target = hash ?? dummyHash
        let matches = verifier(password, target)
        let cost = Bcrypt.cost(of: target) ?? topCost
        for padding in stride(from: cost, to: topCost, by: 1) {
            _ = verifier(password, Bcrypt.withCost(dummyHash, padding))
        }
        return matches && hash != nil
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
