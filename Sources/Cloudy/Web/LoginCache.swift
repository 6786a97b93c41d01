import NIOConcurrencyHelpers

/// The (user, password) pairs bcrypt has verified, so a scrape every second does not pay bcrypt
/// (tens of milliseconds) each time. Keyed by SHA-256 of a per-process random salt, the user and
/// the password: the password is never kept, not even hashed alone. Only verified logins are
/// kept: a refusal is never cached, so wrong logins (however many) cannot push a good one out.
/// Bounded: when full, the login used longest ago makes room.
final class LoginCache: Sendable {
    struct Key: Hashable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64
    }

    let capacity: Int
    private let salt: [UInt8]
    /// Each verified login with when it was last used (a counter that only grows).
    private let entries = NIOLockedValueBox(Entries())

    private struct Entries {
        var lastUse: [Key: UInt64] = [:]
        var clock: UInt64 = 0
    }

    init(capacity: Int = 1024) {
        self.capacity = capacity
        salt = (0..<32).map { _ in UInt8.random(in: 0...255) }
    }

    var count: Int { entries.withLockedValue { $0.lastUse.count } }

    func key(user: some Collection<UInt8>, password: some Collection<UInt8>) -> Key {
        // salt ‖ len(user) ‖ user ‖ password: the length keeps ("ab", "c") apart from ("a", "bc").
        var input = salt
        let length = UInt32(user.count)
        input.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) })
        input.append(contentsOf: user)
        input.append(contentsOf: password)
        defer { input.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        let digest = SHA256.digest(input)
        func word(_ offset: Int) -> UInt64 {
            digest[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
        }
        return Key(a: word(0), b: word(8), c: word(16), d: word(24))
    }

    /// True when bcrypt verified this login before (and it is still kept); marks it used.
    func contains(_ key: Key) -> Bool {
        entries.withLockedValue { entries in
            guard entries.lastUse[key] != nil else { return false }
            entries.clock += 1
            entries.lastUse[key] = entries.clock
            return true
        }
    }

    /// Keeps a login bcrypt verified; when full, forgets the one used longest ago. (A scan of at
    /// most `capacity` entries, after a bcrypt that cost thousands of times more.)
    func remember(_ key: Key) {
        entries.withLockedValue { entries in
            if entries.lastUse[key] == nil, entries.lastUse.count >= capacity,
                let oldest = entries.lastUse.min(by: { $0.value < $1.value })?.key
            {
                entries.lastUse[oldest] = nil
            }
            entries.clock += 1
            entries.lastUse[key] = entries.clock
        }
    }
}
