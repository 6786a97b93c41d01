import CMalloc
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// How the process is set up for a long life in a small container: descriptor limit, malloc
/// arenas, and how many event-loop threads the CPUs it may run on can keep busy.
enum RuntimeTuning {
    /// Applied once at start-up, before anything allocates much.
    static func apply() {
        raiseFileDescriptorLimit()
        // glibc gives each thread that allocates its own arena (up to 8 per core); freed memory
        // then sits in several. Two arenas hold everything a refresh and the server allocate.
        _ = mallopt(M_ARENA_MAX, 2)
        // Blocks from 128 KiB up (the rendered bodies, upstream responses) are mapped on their
        // own, as glibc does by default until the first such block is freed: then it raises the
        // limit to that size and serves the next ones from an arena, where the unused capacity
        // of a buffer (ByteBuffer rounds up to a power of two) can pin pages dirtied earlier.
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }

    /// One event-loop thread per CPU this process may run on, at most two: a scrape is a
    /// buffer hand-off, and the refresh runs on Dispatch. The CPUs come from the affinity mask
    /// (`taskset`, cpusets), which NIO's `System.coreCount` does not read; two loops sharing
    /// one CPU only take turns, each waiting a scheduler slice for the other.
    static func eventLoopThreads() -> Int {
        max(1, min(2, allowedCPUs() ?? System.coreCount, System.coreCount))
    }

    /// Bits set in `Cpus_allowed` of /proc/self/status (hex words separated by commas).
    static func allowedCPUs() -> Int? {
        guard let status = ProcessMetrics.readFile("/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return nil }
        var count = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character.isHexDigit {
            count += character.hexDigitValue.map(\.nonzeroBitCount) ?? 0
        }
        return count > 0 ? count : nil
    }

    /// Lifts the soft limit on open files to the hard limit (as Go programs do), so a thousand
    /// concurrent scrapers or slow clients cannot exhaust the default 1024 descriptors.
    static func raiseFileDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = min(limit.rlim_max, 1 << 20)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
