/// `--shard=INDEX/COUNT` (or `shard:` in the config): this replica owns only the places whose
/// stable name hash modulo COUNT is INDEX, so COUNT replicas together cover every place once.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public static let all = Shard(index: 0, count: 1)

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `INDEX/COUNT` with 0 ≤ INDEX < COUNT ≤ 10,000.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, count <= 10_000,
            index >= 0, index < count
        else { return nil }
        self.init(index: index, count: count)
    }

    public var description: String { "\(index)/\(count)" }

    public func owns(_ name: String) -> Bool {
        count == 1 || Int(Self.hash(name) % UInt64(count)) == index
    }

    /// FNV-1a (64 bit) of the UTF-8 name: stable across processes, machines and versions,
    /// unlike Swift's seeded `Hasher`.
    public static func hash(_ name: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
