/// One `--web.listen-address`: `HOST:PORT`, `:PORT` (every interface), or `[IPv6]:PORT`.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// nil means every interface.
    public var host: String?
    public var port: Int

    public init(host: String?, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]") else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil  // an IPv6 host must be in brackets
        }
        self.host = host.isEmpty ? nil : host
        self.port = port
    }

    public var description: String {
        guard let host else { return ":\(port)" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
