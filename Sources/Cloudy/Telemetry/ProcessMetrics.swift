#if canImport(Glibc)
    import Glibc
#endif

/// The standard `process_*` metrics, read from /proc at scrape time (the only live part of
/// `/metrics`): CPU seconds, resident and virtual memory, open and maximum file descriptors,
/// start time. swift-prometheus has no such collector, hence this small reader.
public enum ProcessMetrics {
    static let clockTicks = Double(sysconf(Int32(_SC_CLK_TCK)))
    static let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
    /// Start time is fixed for the life of the process; read it once.
    static let startTime: Double? = {
        guard let stat = readStat(), let boot = bootTime() else { return nil }
        return boot + stat.startTicks / clockTicks
    }()

    public static let cpu = MetricDescriptor(
        "process_cpu_seconds", .counter, "Total user and system CPU time spent in seconds.")
    public static let resident = MetricDescriptor(
        "process_resident_memory_bytes", .gauge, "Resident memory size in bytes.")
    public static let virtual = MetricDescriptor(
        "process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.")
    public static let openFDs = MetricDescriptor("process_open_fds", .gauge, "Number of open file descriptors.")
    public static let maxFDs = MetricDescriptor("process_max_fds", .gauge, "Maximum number of open file descriptors.")
    public static let start = MetricDescriptor(
        "process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.")

    public static func page() -> MetricFamilies {
        var page = MetricFamilies()
        if let stat = readStat() {
            page.add(cpu, value: (stat.utime + stat.stime) / clockTicks, suffix: "_total")
            page.add(virtual, value: stat.vsize)
            page.add(resident, value: stat.rss * pageSize)
        }
        page.add(openFDs, value: countOpenFDs())
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            page.add(maxFDs, value: Double(limit.rlim_cur))
        }
        page.add(start, value: startTime)
        return page
    }

    struct Stat {
        var utime: Double
        var stime: Double
        var startTicks: Double
        var vsize: Double
        var rss: Double
    }

    static func readStat() -> Stat? {
        guard let text = readFile("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 22 else { return nil }
        func field(_ number: Int) -> Double { Double(fields[number - 3]) ?? 0 }
        return Stat(utime: field(14), stime: field(15), startTicks: field(22), vsize: field(23), rss: field(24))
    }

    static func bootTime() -> Double? {
        guard let text = readFile("/proc/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6))
        }
        return nil
    }

    static func countOpenFDs() -> Double? {
        guard let dir = opendir("/proc/self/fd") else { return nil }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return Double(max(0, count - 1))  // minus the descriptor opendir itself holds
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
