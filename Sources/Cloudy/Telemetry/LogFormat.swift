import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `--log.format`: logfmt (the default, as Prometheus' own programs write) or JSON lines.
/// swift-log ships no formatter for either, hence this handler; it writes to standard error.
public enum LogFormat: String, Sendable, CaseIterable {
    case logfmt
    case json
}

public struct LineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let format: LogFormat
    let label: String

    public init(label: String, format: LogFormat, level: Logger.Level) {
        self.label = label
        self.format = format
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [(String, String)] = [
            ("ts", Self.timestamp()), ("level", Self.levelName(event.level)), ("msg", event.message.description),
        ]
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for key in merged.keys.sorted() {
            fields.append((key, "\(merged[key]!)"))
        }
        var line = format == .json ? Self.json(fields) : Self.logfmt(fields)
        line += "\n"
        // One write(2) per line keeps lines whole when several threads log at once.
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    static func levelName(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: return "debug"
        case .info, .notice: return "info"
        case .warning: return "warn"
        case .error, .critical: return "error"
        }
    }

    static func logfmt(_ fields: [(String, String)]) -> String {
        fields.map { key, value in
            let needsQuotes =
                value.isEmpty
                || value.contains(where: {
                    $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.isNewline
                        || $0.unicodeScalars.contains { !WarningFamilies.isShown($0) }
                })
            return key + "=" + (needsQuotes ? quoted(value) : value)
        }.joined(separator: " ")
    }

    static func json(_ fields: [(String, String)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + quoted($0.1) }.joined(separator: ",") + "}"
    }

    /// A double-quoted string with JSON escapes (which logfmt readers accept too). What a
    /// terminal or a log viewer would act on or hide is escaped too: control characters (C1's
    /// NEL among them), the line separators U+2028 and U+2029, and invisible format characters
    /// such as a direction override (`WarningFamilies.isShown`), so one log line stays one line
    /// and reads as written.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where !WarningFamilies.isShown(scalar) || scalar == "\u{2028}" || scalar == "\u{2029}":
                for unit in String(scalar).utf16 { out += "\\u" + String(unit, radix: 16).leftPadded(to: 4) }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds, without Foundation's formatters.
    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let seconds = Int(spec.tv_sec)
        let days = seconds / 86400
        let (year, month, day) = HTTPDate.civilFromDays(days)
        let rest = seconds % 86400
        func two(_ n: Int) -> String { String(n).leftPadded(to: 2) }
        let millis = String(Int(spec.tv_nsec) / 1_000_000).leftPadded(to: 3)
        return
            "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)).\(millis)Z"
    }
}
