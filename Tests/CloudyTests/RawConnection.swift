import Foundation

/// A plain TCP connection to 127.0.0.1 for sending what no HTTP client would: garbage,
/// huge headers, a request trickled byte by byte.
final class RawConnection {
    let fd: Int32

    /// `receiveBuffer` sets `SO_RCVBUF` before connecting, so that the window the SYN offers is
    /// already that small (set after, it shrinks the buffer but not the window scale).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure("connect to \(port) failed: errno \(errno)")
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Everything the server sends until it closes (or resets) the connection; `closed` is
    /// false when 5 s passed with the connection still open.
    func readUntilClosed() -> (text: String, closed: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: out, as: UTF8.self), errno != EAGAIN && errno != EWOULDBLOCK) }
            out.append(contentsOf: buffer[0..<n])
        }
    }
}

/// A port on 127.0.0.1 where nothing listens, for as long as this lives: a socket bound there and
/// never listening, so that connecting is refused. A port found free and let go can meanwhile be
/// taken by another process of the parallel suite, or picked by the exporter's own connect as its
/// source port (a connection to itself); a refused-connection test once counted a call.
final class ClosedPort {
    let port: Int
    private let socketFD: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            close(fd)
            throw Failure("no port to hold")
        }
        socketFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socketFD) }
}
