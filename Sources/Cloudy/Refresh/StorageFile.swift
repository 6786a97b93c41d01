import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file under `--storage.path` that Cloudy keeps across restarts (the geocoder's resolved
/// places, the quota state), written whole to a temporary file, flushed to the disk, and then
/// renamed over the old one (the directory flushed too): rename(2) is atomic, so a crash, of the
/// process or of the machine, leaves the old file or the new one, never half of either.
enum StorageFile {
    static func write(_ data: Data, to file: URL) throws {
        let directory = file.deletingLastPathComponent()
        try makeDirectory(directory)
        let temporary = file.appendingPathExtension("tmp")
        // A new file, never one left there: a link left in its place would be written through.
        guard unlink(temporary.path) == 0 || errno == ENOENT else { throw StorageError(temporary, errno) }
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError(temporary, errno) }
        let written = data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    if count == 0 { errno = ENOSPC }  // no progress: the disk is full
                    return false
                }
                offset += count
            }
            return true
        }
        let flushed = written && fsync(descriptor) == 0
        let code = errno
        close(descriptor)
        guard flushed else {
            unlink(temporary.path)
            throw StorageError(temporary, code)
        }
        guard rename(temporary.path, file.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw StorageError(file, code)
        }
        // The rename itself lasts once the directory's entry is on the disk.
        let parent = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if parent >= 0 {
            _ = fsync(parent)
            close(parent)
        }
    }

    /// Moves a file Cloudy cannot read out of the way, to `<name>.unreadable` (replacing an older
    /// one there), so that the state written afresh does not overwrite what the operator may want
    /// to read. Only a regular file: a directory, a device or a link is left where it is (a link's
    /// target is never written: the state replaces the link). Returns where it is now, nil when
    /// it was left; throws why `file` could not be moved there.
    static func setAside(_ file: URL) throws(StorageError) -> URL? {
        var status = stat()
        guard lstat(file.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let aside = file.appendingPathExtension("unreadable")
        // Named by where it was to go: "…/quota.json.unreadable: Is a directory" says what is in
        // the way, where the file's own name would call it a directory.
        guard rename(file.path, aside.path) == 0 else { throw StorageError(aside, errno) }
        return aside
    }

    /// Makes `directory` and the directories above it that are missing (as `mkdir -p`), or says
    /// why not in the system's words ("…/data: Not a directory" when a file is in the way).
    static func makeDirectory(_ directory: URL) throws(StorageError) {
        var path = ""  // a file URL's path is absolute
        // `code` is read before the URL is built: URL(fileURLWithPath:) sets errno.
        func failed(_ code: Int32) -> StorageError { StorageError(URL(fileURLWithPath: path), code) }
        for component in directory.path.split(separator: "/") {
            path += "/" + component
            guard mkdir(path, 0o755) != 0 else { continue }
            guard errno == EEXIST else { throw failed(errno) }
            // Something is there: a directory, or what says why it is none (a file; a link that
            // loops or leads nowhere, in stat's words).
            var status = stat()
            guard stat(path, &status) == 0 else { throw failed(errno) }
            guard status.st_mode & S_IFMT == S_IFDIR else { throw failed(ENOTDIR) }
        }
    }

    /// The whole of `file`, or why it cannot be read in the system's words ("…/quota.json: Is a
    /// directory", "…: Permission denied", "…: File too large" past `limit` bytes: `/dev/zero`
    /// never ends). A pipe is read to its end; a FIFO without a writer reads as empty, at once.
    static func read(_ file: URL, atMost limit: Int = .max) throws(StorageError) -> Data {
        // Opened without blocking, as a FIFO with no writer would block the open; read blocking.
        let descriptor = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw StorageError(file, errno) }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw StorageError(file, errno) }
            if count == 0 { return data }
            guard data.count + count <= limit else { throw StorageError(file, EFBIG) }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// What a log line says of an unreadable file `setAside` was asked to move: where it went, or
    /// why it could not.
    static func setAsideMetadata(_ file: URL) -> (key: String, value: String)? {
        do throws(StorageError) {
            return try setAside(file).map { ("set_aside_as", $0.path) }
        } catch {
            return ("not_set_aside", error.description)
        }
    }

    /// The size of `file` in bytes, or nil when there is none.
    static func size(of file: URL) -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path) else { return nil }
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }
}

/// Why a storage file could not be written or read, as the system said it: "…/quota.json.tmp:
/// Permission denied", "…/places.json: Is a directory", "…: No space left on device".
struct StorageError: Error, CustomStringConvertible {
    let file: URL
    /// The system's words alone: "Permission denied".
    let reason: String
    var description: String { "\(file.path): \(reason)" }

    init(_ file: URL, _ code: Int32) {
        self.file = file
        reason = String(cString: strerror(code))
    }
}
