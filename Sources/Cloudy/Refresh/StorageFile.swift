import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file under `--storage.path` that Cloudy keeps across restarts (the geocoder's resolved
/// places, the quota state), written whole to a temporary file and then renamed over the old one:
/// rename(2) is atomic, so a crash leaves the old file or the new one, never half of either.
enum StorageFile {
    static func write(_ data: Data, to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = file.appendingPathExtension("tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, file.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }
}
