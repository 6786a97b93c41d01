import CZlib
import NIOCore

/// A gzip member whose deflate stream is left open at a byte boundary, so a small live tail
/// (the `process_*` metrics) can be appended per scrape without compressing the big cached part
/// again: the tail goes in a final *stored* block, and the trailer's CRC-32 is combined from
/// the two parts. Compression happens once per refresh; a scrape costs a CRC of a few hundred bytes.
///
/// The deflate stream is made of `DeflatedPiece`s, each compressed on its own, so the two
/// exposition formats (the same text but for a few header lines) share the compressed text
/// instead of compressing it twice.
public struct GzipBody: Sendable {
    /// gzip header + deflate blocks of the cached text, ending with a sync flush (not final).
    public let prefix: ByteBuffer
    public let crc: UInt32
    public let length: Int

    /// zlib's level for the cached text, chosen by measurement (bench/RESULTS.md, issue 19): on
    /// the W1000 exposition (17.4 MB) level 6 took 58 ms of CPU for 748 KB, level 4 41 ms for
    /// 754 KB, level 3 25 ms for 808 KB (8 % more bytes per gzip scrape), level 1 21 ms for 901 KB.
    /// libdeflate was not taken: its whole-buffer API always ends the stream with a final block,
    /// so the live tail could no longer be appended to the member (see `suffix(appending:)`).
    public static let level: Int32 = 3

    public init(compressing data: [UInt8], level: Int32 = GzipBody.level) {
        self.init(compressing: [data[...]], level: level)
    }

    /// Compresses the concatenation of `chunks` (no contiguous copy of the text is made).
    public init(compressing chunks: [ArraySlice<UInt8>], level: Int32 = GzipBody.level) {
        self.init(pieces: [DeflatedPiece(compressing: chunks, level: level)])
    }

    /// The member whose text is the pieces' texts in order.
    public init(pieces: [DeflatedPiece]) {
        let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]
        var out = ByteBuffer()
        out.reserveCapacity(header.count + pieces.reduce(0) { $0 + $1.deflated.readableBytes })
        out.writeBytes(header)
        var crc = UInt32(crc32(0, nil, 0))
        var length = 0
        for piece in pieces {
            out.writeImmutableBuffer(piece.deflated)
            crc = UInt32(crc32_combine(uLong(crc), uLong(piece.crc), off_t(piece.length)))
            length += piece.length
        }
        self.prefix = out
        self.crc = crc
        self.length = length
    }

    /// The cached text, read back from `prefix` (for plain scrapes; see `RenderedMetrics`), into
    /// buffers of `pieces` bytes each, in order (they must add up to `length`).
    func inflated(pieces: [Int]) -> [ByteBuffer] {
        precondition(pieces.reduce(0, +) == length, "pieces must hold the text exactly")
        var member = prefix
        member.writeBytes(suffix(appending: []))
        var stream = z_stream()
        guard cloudy_inflate_init_gzip(&stream) == Z_OK else { fatalError("zlib inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        var status = Z_OK
        let text = member.withUnsafeReadableBytes { source -> [ByteBuffer] in
            stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(source.count)
            return pieces.indices.map { index -> ByteBuffer in
                let size = pieces[index]
                var piece = ByteBufferAllocator().buffer(capacity: max(size, 1))
                let written = piece.withUnsafeMutableWritableBytes { target -> Int in
                    stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(size)
                    if index == pieces.count - 1 {
                        status = inflate(&stream, Z_FINISH)  // the rest of the text, and the trailer
                    } else {
                        while stream.avail_out > 0, status == Z_OK { status = inflate(&stream, Z_NO_FLUSH) }
                    }
                    return size - Int(stream.avail_out)
                }
                piece.moveWriterIndex(forwardBy: written)
                return piece
            }
        }
        precondition(status == Z_STREAM_END && Int(stream.total_out) == length, "own gzip member does not inflate")
        return text
    }

    /// The bytes that complete the member after `prefix`: `tail` as stored blocks, the last one
    /// final, then CRC-32 and length of the whole text.
    public func suffix(appending tail: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(tail.count + 5 * (tail.count / 65535 + 1) + 8)
        var start = 0
        repeat {
            let count = min(65535, tail.count - start)
            let isLast = start + count == tail.count
            out.append(isLast ? 0x01 : 0x00)
            out.append(UInt8(count & 0xFF))
            out.append(UInt8(count >> 8))
            out.append(UInt8(~count & 0xFF))
            out.append(UInt8((~count >> 8) & 0xFF))
            out.append(contentsOf: tail[start..<start + count])
            start += count
        } while start < tail.count
        let tailCRC = tail.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        let combined = UInt32(crc32_combine(uLong(crc), uLong(tailCRC), off_t(tail.count)))
        let total = UInt32(truncatingIfNeeded: length + tail.count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((combined >> UInt32(shift)) & 0xFF)) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((total >> UInt32(shift)) & 0xFF)) }
        return out
    }
}

/// Raw deflate blocks of one piece of text, compressed with a fresh history (nothing refers to
/// bytes before the piece) and ending with a sync flush (byte-aligned, not final): pieces put
/// one after another are one valid deflate stream, whatever came before each.
public struct DeflatedPiece: Sendable {
    public let deflated: ByteBuffer
    public let crc: UInt32
    public let length: Int

    /// Compresses the concatenation of `chunks` (no contiguous copy of the text is made).
    public init(compressing chunks: [ArraySlice<UInt8>], level: Int32 = GzipBody.level) {
        // Room for a short piece (a family's header lines) as it is, for a long one to start with.
        let deflater = PieceDeflater(level: level, room: min(64 * 1024, chunks.reduce(64) { $0 + $1.count }))
        for chunk in chunks { deflater.add(chunk) }
        self = deflater.finish()
    }

    fileprivate init(deflated: ByteBuffer, crc: UInt32, length: Int) {
        self.deflated = deflated
        self.crc = crc
        self.length = length
    }
}

/// A `DeflatedPiece` compressed as its text is written, a stretch at a time: the writer of a
/// page hands over each stretch and reuses its room, so the text of a run is never held whole.
/// A class: zlib's stream state points back at its `z_stream`, which must not move.
final class PieceDeflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var out = ByteBuffer()
    private var crc = UInt32(crc32(0, nil, 0))
    /// Bytes of text taken so far.
    private(set) var length = 0
    private var finished = false

    /// `room`: the bytes of output to make room for first (more is made as needed).
    init(level: Int32 = GzipBody.level, room: Int = 64 * 1024) {
        stream.initialize(to: z_stream())
        guard cloudy_deflate_init_raw(stream, level) == Z_OK else { fatalError("zlib deflateInit2 failed") }
        out.reserveCapacity(room)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `text` after what came before (its output may wait inside zlib for more).
    func add(_ text: ArraySlice<UInt8>) {
        precondition(!finished, "a finished piece takes no more text")
        text.withUnsafeBufferPointer { compress(UnsafeRawBufferPointer($0), flush: Z_NO_FLUSH) }
    }

    /// The piece: everything added, ending with a sync flush. The deflater is done after this.
    func finish() -> DeflatedPiece {
        precondition(!finished, "a piece is finished once")
        finished = true
        compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_SYNC_FLUSH)
        return DeflatedPiece(deflated: out, crc: crc, length: length)
    }

    /// Where the text is compressed and its CRC taken. A profile boundary: bench/refresh counts
    /// this function as the "compress" phase.
    @inline(never)
    private func compress(_ text: UnsafeRawBufferPointer, flush: Int32) {
        // Not for no text: given no buffer, crc32 answers its initial value, not `crc`.
        if let bytes = text.baseAddress, !text.isEmpty {
            crc = UInt32(crc32(uLong(crc), bytes.assumingMemoryBound(to: Bytef.self), uInt(text.count)))
        }
        length += text.count
        stream.pointee.next_in = UnsafeMutablePointer(mutating: text.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(text.count)
        repeat {
            if out.writableBytes < 1024 { out.reserveCapacity(out.writerIndex + max(16 * 1024, out.writerIndex)) }
            let produced: Int = out.withUnsafeMutableWritableBytes { target in
                stream.pointee.next_out = target.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(target.count)
                let status = deflate(stream, flush)
                precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib deflate failed: \(status)")
                return target.count - Int(stream.pointee.avail_out)
            }
            out.moveWriterIndex(forwardBy: produced)
            // Done once zlib took all the text and had room left to write what it would.
        } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0
    }
}
