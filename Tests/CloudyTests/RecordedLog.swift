import Logging
import NIOConcurrencyHelpers

/// A log that keeps what is written to it, for tests that check what a component logs (and how
/// often). `logger` writes here at every level.
final class RecordedLog: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let entries = NIOLockedValueBox<[Entry]>([])

    var logger: Logger {
        Logger(label: "recorded") { _ in Handler(log: self) }
    }

    /// Every entry so far, oldest first.
    var all: [Entry] { entries.withLockedValue { $0 } }

    /// The entries whose message contains `text`.
    func entries(containing text: String) -> [Entry] {
        all.filter { $0.message.contains(text) }
    }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let entry = Entry(level: event.level, message: event.message.description, metadata: merged)
            log.entries.withLockedValue { $0.append(entry) }
        }
    }
}
