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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = file.appendingPathExtension("tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(temporary) }
        let written = data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let flushed = written && fsync(descriptor) == 0
        close(descriptor)
        guard flushed else { throw failure(temporary) }
        guard rename(temporary.path, file.path) == 0 else { throw failure(file) }
        // The rename itself lasts once the directory's entry is on the disk.
        let parent = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if parent >= 0 {
            _ = fsync(parent)
            close(parent)
        }
    }

    private static func failure(_ file: URL) -> CocoaError {
        CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
    }
}
