import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `<storage.path>/lock`, held while the exporter runs. Two exporters on one storage path (two
/// shards given one volume, a second copy started by hand) would overwrite each other's
/// `places.json` and `quota.json`, so the second one stops at start-up, as Prometheus does with
/// its data directory. The kernel lets go of the lock when the process ends, however it ends.
public enum StorageLock {
    /// Another running process holds the storage path.
    public struct InUse: Error, CustomStringConvertible {
        public let description: String
    }

    /// Takes the lock for the life of this process. A path that cannot be created or opened
    /// is logged and not fatal: the exporter serves without keeping state, as when a write fails.
    public static func acquire(_ storagePath: String, logger: Logger) throws(InUse) {
        let directory = URL(fileURLWithPath: storagePath)
        let file = directory.appendingPathComponent("lock")
        let descriptor: Int32
        do {
            try StorageFile.makeDirectory(directory)
            // A lock file another user left (or a read-only mount) still locks when opened to read.
            let writable = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            let whyNotWritable = errno
            descriptor = writable >= 0 ? writable : open(file.path, O_RDONLY | O_CLOEXEC)
            // No lock file to read either: why it could not be made is the reason, not its absence.
            guard descriptor >= 0 else { throw StorageError(file, errno == ENOENT ? whyNotWritable : errno) }
        } catch {
            logger.warning(
                "cannot lock the storage path; another exporter on it would overwrite its files",
                metadata: ["path": "\(storagePath)", "error": "\(error)"])
            return
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            guard code == EWOULDBLOCK else {
                // A file system without locks (NFS without lockd): serve, and say so.
                close(descriptor)
                logger.warning(
                    "cannot lock the storage path; another exporter on it would overwrite its files",
                    metadata: ["path": "\(storagePath)", "error": "\(StorageError(file, code))"])
                return
            }
            let holder = (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            close(descriptor)
            throw InUse(
                description: "--storage.path \(storagePath) is in use by another cloudy_exporter"
                    + (holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "")
                    + ": give each exporter, each shard too, a storage path of its own")
        }
        // The holder's pid, for the message above; the descriptor stays open (and locked).
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}
