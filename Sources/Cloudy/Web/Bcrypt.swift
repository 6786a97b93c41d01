import CCrypt

#if canImport(Glibc)
    import Glibc
#endif

/// bcrypt through libxcrypt's `crypt_rn` (no cryptography of our own): checking a password
/// against a `$2a$`/`$2b$`/`$2y$` hash, telling a well-formed hash from anything else, and
/// making the dummy hash an unknown user is checked against.
enum Bcrypt {
    /// bcrypt reads at most 72 bytes of a password; a longer one is refused rather than cut.
    static let maxPasswordBytes = 72
    /// The highest cost Cloudy advises. Each step doubles the time of a login not yet cached
    /// (`cpuSeconds(cost:)`), so above 16 an uncached login outlasts any scrape timeout. bcrypt
    /// itself goes to 31 and the toolkit accepts any of it, so Cloudy does too, with a warning.
    static let advisedMaximumCost = 16
    /// The cost `cpuSeconds(cost:)` times: ~15 ms here, cheap enough for start-up.
    static let measuredCost = 8

    /// The cost (log2 of the rounds) of a well-formed hash, nil for anything else.
    static func cost(of hash: String) -> Int? {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
            bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
            let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost)
        else { return nil }
        let alphabet = Set("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        guard bytes[7...].allSatisfy(alphabet.contains) else { return nil }
        return cost
    }

    /// True when `password` hashes to `hash`. Always runs bcrypt once, whatever the input, so a
    /// refused password (too long, a NUL byte) costs the same time as a wrong one.
    static func verify(password: some Collection<UInt8>, hash: String) -> Bool {
        let usable = password.count <= maxPasswordBytes && !password.contains(0)
        // crypt_rn reads a C string: the bytes as they came, NUL-terminated (never a Swift
        // String, which would replace bytes that are not UTF-8).
        var input = usable ? Array(password) : Array(repeating: UInt8(ascii: "x"), count: 8)
        input.append(0)
        guard let output = crypt(input, setting: hash) else { return false }
        return usable && constantTimeEqual(output, Array(hash.utf8))
    }

    /// A well-formed hash at `cost` that no password produces: libxcrypt's random salt and 31
    /// random characters where the digest goes. What an unknown user's password is checked
    /// against, so that costs as much as a known user's wrong password. Made without running
    /// bcrypt (crypt_rn reads only the salt of a hash it checks against), so a re-read of the web
    /// config with a costly user does not pay for it.
    static func dummyHash(cost: Int) -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        let alphabet = Array("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        // nil random bytes: libxcrypt takes them from the kernel.
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &salt, Int32(salt.count)) != nil else {
            // Only when the kernel has no randomness; a fixed salt still costs the same time.
            return withCost("$2b$04$" + String(repeating: ".", count: 53), cost)
        }
        let setting = String(decoding: salt.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let digest = (0..<31).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] }
        return setting + String(decoding: digest, as: UTF8.self)
    }

    /// A well-formed `hash` with its cost replaced: the same salt and digest, checked at `cost`.
    static func withCost(_ hash: String, _ cost: Int) -> String {
        String(hash.prefix(4)) + (cost < 10 ? "0" : "") + "\(cost)" + String(hash.dropFirst(6))
    }

    /// The CPU time one bcrypt at `cost` takes on this machine, measured now: the fastest of
    /// three checks at `measuredCost` on this thread's CPU clock (so neither a busy machine nor
    /// a preempted thread counts), times 2^(cost − measuredCost), since bcrypt's key schedule
    /// runs exactly 2^cost times and the rest is microseconds. Running bcrypt at the cost itself
    /// would take as long as the login it warns about.
    static func cpuSeconds(cost: Int) -> Double {
        let setting = dummyHash(cost: measuredCost)
        var fastest = Double.infinity
        for _ in 0..<3 {
            let start = threadCPUSeconds()
            _ = verify(password: Array("measure".utf8), hash: setting)
            fastest = min(fastest, threadCPUSeconds() - start)
        }
        return fastest * Double(1 << max(0, cost - measuredCost))
    }

    /// CPU time this thread has used: what bcrypt's cost is measured in (tests use it too).
    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// `crypt_rn` with its 32 KB work area on the heap; nil when libxcrypt refuses the setting.
    private static func crypt(_ password: [UInt8], setting: String) -> [UInt8]? {
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer {
            // The work area held the password: wipe it before handing the memory back.
            UnsafeMutableRawPointer(data).initializeMemory(
                as: UInt8.self, repeating: 0, count: MemoryLayout<crypt_data>.size)
            data.deallocate()
        }
        UnsafeMutableRawPointer(data).initializeMemory(
            as: UInt8.self, repeating: 0, count: MemoryLayout<crypt_data>.size)
        let result = password.withUnsafeBufferPointer { passwordBytes in
            passwordBytes.withMemoryRebound(to: CChar.self) { phrase in
                crypt_rn(
                    phrase.baseAddress, setting, UnsafeMutableRawPointer(data), Int32(MemoryLayout<crypt_data>.size))
            }
        }
        guard let result, result.pointee != 0, result.pointee != CChar(UInt8(ascii: "*")) else { return nil }
        return Array(UnsafeBufferPointer(start: result, count: strlen(result))).map { UInt8(bitPattern: $0) }
    }

    /// Compares without stopping at the first difference.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
