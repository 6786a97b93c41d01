import CZlib

/// Reads a gzip body back: the tests check what the server sends with it. Nil for anything that
/// is not exactly one whole gzip member.
enum Gunzip {
    static func decompress(_ data: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard cloudy_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = data
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return input.withUnsafeMutableBufferPointer { source -> [UInt8]? in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, target.count - Int(stream.avail_out))
                }
                out.append(contentsOf: chunk[0..<produced])
                if status == Z_STREAM_END { return stream.avail_in == 0 ? out : nil }
                if status != Z_OK || (produced == 0 && stream.avail_in == 0) { return nil }
            }
        }
    }
}
