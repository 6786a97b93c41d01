import Foundation
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
    /// (another scheme, bad base64, no colon).
    static func credentials(_ header: String?) -> (user: [UInt8], password: [UInt8])? {
        guard let header else { return nil }
        let trimmed = header.drop { $0 == " " }
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "basic " else { return nil }
        let encoded = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded) else { return nil }
        let bytes = Array(data)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (Array(bytes[..<colon]), Array(bytes[(colon + 1)...]))
    }
}
