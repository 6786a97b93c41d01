import Foundation
import Logging

/// What the provider's quota has seen of this exporter, kept in `<storage.path>/quota.json` so a
/// restart does not forget it: the calls spent (`CallLedger`) and a quiet period in force, for
/// the provider and URL they were spent on. Without it an exporter that crash-loops would send a
/// full refresh per restart into a daily quota, and ask a provider that refused it at once.
/// Written atomically (a crash leaves the old or the new file); a file that is too big or does
/// not decode is ignored with a log line, and set aside as `quota.json.unreadable` before the
/// state is written afresh.
public struct QuotaState: Codable, Equatable, Sendable {
    var provider: ProviderName
    var url: String
    var ledger: CallLedger
    var quietPeriod: QuietPeriod?
    /// True when the calls were sent with a key (Open-Meteo's commercial API): that quota is the
    /// key's, shared with no feed asking without one. Absent (nil) in a file an older Cloudy
    /// wrote, which did not say: such a file counts for the owner with a key or without.
    var keyed: Bool?
    /// The fingerprint of the key the calls were sent with (`ProviderSettings.quotaKey`): another
    /// key is another quota. Absent in a file an older Cloudy wrote, which counts for any key.
    var key: String?
    /// What the file keeps of the owners a reload left (another provider, server or key), each
    /// without others of its own, so that a restart on a config rolled back to one of them still
    /// finds its calls and its refusal (`QuotaAccount.State.left`). Absent in a file an older
    /// Cloudy wrote.
    var others: [QuotaState]?

    /// Whether the calls were sent with a key (`keyed`).
    var isKeyed: Bool { keyed == true }

    /// Far above what a month of batches every few seconds takes (the ledger merges old entries).
    static let maxFileBytes = 4 << 20

    static func file(in storagePath: String) -> URL {
        URL(fileURLWithPath: storagePath).appendingPathComponent("quota.json")
    }

    /// The file of an air-quality source's account of its own (`AirQualityFeed`).
    static func airQualityFile(in storagePath: String) -> URL {
        URL(fileURLWithPath: storagePath).appendingPathComponent("quota-air-quality.json")
    }

    /// The state kept for `provider` at `url`'s server, if a readable file holds one for them.
    static func load(from file: URL, provider: ProviderName, url: String, logger: Logger) -> QuotaState? {
        guard let state = read(from: file, logger: logger) else { return nil }
        guard state.isFor(provider, url: url) else {
            state.logStartingAfresh(for: provider, url: url, file: file, logger: logger)
            return nil
        }
        return state
    }

    /// Says that the file, kept for another owner, does not count for `provider` at `url`
    /// (asked with a key when `keyed`).
    func logStartingAfresh(
        for provider: ProviderName, url: String, keyed: Bool = false, key: String? = nil, file: URL, logger: Logger
    ) {
        // The log never names a key, not even by its fingerprint: only that it is another.
        let anotherKey =
            self.provider == provider && ProviderSettings.isSameServer(self.url, url) && self.key != nil && key != nil
        let now = Self.owner(provider, url, keyed: keyed, key: key) + (anotherKey ? " (another one)" : "")
        logger.info(
            "the quota state file is for another provider, server or key; it starts afresh for this one",
            metadata: ["file": "\(file.path)", "kept_for": "\(owner)", "now_for": "\(now)"])
    }

    /// The state a readable file keeps, for whichever owner it is. `settingAside` one that cannot
    /// be read (`StorageFile.setAside`, before anything is logged: a log level above `warning`
    /// must not keep it where the account writes): for the account that will write its own state
    /// there. An owner among `others` whose ledger is out of range is left out, with a log line.
    static func read(from file: URL, logger: Logger, settingAside: Bool = false) -> QuotaState? {
        guard let size = StorageFile.size(of: file) else { return nil }
        func ignore(_ message: Logger.Message, _ metadata: Logger.Metadata) -> QuotaState? {
            var metadata = metadata
            if settingAside, let (key, value) = StorageFile.setAsideMetadata(file) { metadata[key] = "\(value)" }
            logger.warning(message, metadata: metadata.merging(["file": "\(file.path)"]) { $1 })
            return nil
        }
        guard size <= maxFileBytes else {
            return ignore("ignoring the quota state file: too big", ["bytes": "\(size)", "limit": "\(maxFileBytes)"])
        }
        var state: QuotaState
        do {
            state = try JSONDecoder().decode(QuotaState.self, from: StorageFile.read(file, atMost: maxFileBytes))
            guard state.ledger.isValid else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "calls out of range"))
            }
        } catch {
            return ignore(
                "ignoring unreadable quota state file; calls spent before the restart are not counted",
                ["error": "\(error)"])
        }
        let invalid = (state.others ?? []).filter { !$0.ledger.isValid }
        if !invalid.isEmpty {
            state.others = state.others?.filter(\.ledger.isValid)
            logger.warning(
                "the quota state file keeps calls out of range for owners left before; they are not counted",
                metadata: ["file": "\(file.path)", "owners": "\(invalid.map(\.owner).joined(separator: ", "))"])
        }
        return state
    }

    /// Whether a state a reload left still says something at `now`: a refusal in force, or calls
    /// within the longest window a quota counts (a month). One that does not is not kept.
    func saysSomething(at now: Double) -> Bool {
        (quietPeriod?.until ?? 0) > now || ledger.spent(inLast: QuotaWindow.month.seconds, at: now) > 0
    }

    /// `open-meteo https://api.open-meteo.com`.
    var owner: String { Self.owner(provider, url, keyed: isKeyed, key: key) }

    /// The owner as the log names it: `<provider> <url>`, `… with a key` when asked with one
    /// (never the key's fingerprint, which would let a weak key be confirmed from a log line).
    static func owner(_ provider: ProviderName, _ url: String, keyed: Bool = false, key: String? = nil) -> String {
        provider.rawValue + " " + url + (keyed || key != nil ? " with a key" : "")
    }

    /// An owner's key among those a `QuotaAccount` (and `AirQualityFeed`) keeps: `owner`, and the
    /// key's fingerprint, as another key's quota is another owner's.
    static func ownerID(_ provider: ProviderName, _ url: String, keyed: Bool = false, key: String? = nil) -> String {
        owner(provider, url, keyed: keyed, key: key) + (key.map { " " + $0 } ?? "")
    }

    var ownerID: String { Self.ownerID(provider, url, keyed: isKeyed, key: key) }

    /// Whether it was kept for `provider` at `url`'s server, asked with a key or without as
    /// `keyed` says (either, for a file that does not say) and with the key `key` fingerprints
    /// (any, for a file that does not say).
    func isFor(_ provider: ProviderName, url: String, keyed: Bool = false, key: String? = nil) -> Bool {
        self.provider == provider && ProviderSettings.isSameServer(self.url, url) && (self.keyed ?? keyed) == keyed
            && (self.key.map { $0 == key } ?? true)
    }

    /// Writes the state to `file` (`StorageFile`).
    func write(to file: URL) throws {
        try StorageFile.write(JSONEncoder().encode(self), to: file)
    }
}

extension ProviderName: Codable {}
