import Foundation
import Logging

/// `<storage.path>/places.json`: what the geocoder found, by place, so a restart does not
/// depend on it.
extension Geocoder {
    struct Found: Codable, Equatable {
        var search: CitySearch
        var latitude: Double
        var longitude: Double
        var timezone: String?
        /// "Springfield, Illinois, United States": what was chosen, for the log.
        var label: String

        /// Coordinates on the globe: a state file edited by hand may hold others.
        var isOnTheGlobe: Bool { Self.isOnTheGlobe(latitude, longitude) }

        static func isOnTheGlobe(_ latitude: Double, _ longitude: Double) -> Bool {
            (-90...90).contains(latitude) && (-180...180).contains(longitude)
        }
    }

    /// What the file holds; empty when it is missing, and when it is too big or cannot be read
    /// or decoded as a whole, said in the log and set aside (`StorageFile.setAside`) before the
    /// look-ups write it afresh. An entry that does not decode, or whose coordinates lie off the
    /// globe, is left out, by name, and the others kept.
    static func read(_ file: URL, logger: Logger) -> [String: Found] {
        guard let size = StorageFile.size(of: file) else { return [:] }
        let entries: [String: Entry]
        do {
            guard size <= maxFileBytes else { throw StorageError(file, EFBIG) }
            // Read to the limit whatever the size says: a link to a device (/dev/zero) has none.
            entries = try JSONDecoder().decode([String: Entry].self, from: StorageFile.read(file, atMost: maxFileBytes))
        } catch {
            let system = (error as? StorageError)?.reason
            let reason = size > maxFileBytes ? "over \(maxFileBytes) bytes" : system ?? "\(error)"
            var metadata: Logger.Metadata = ["file": "\(file.path)", "reason": "\(reason)"]
            if let (key, value) = StorageFile.setAsideMetadata(file) { metadata[key] = "\(value)" }
            logger.warning("cannot read the state file; city: places are looked up again", metadata: metadata)
            return [:]
        }
        // An edit by hand may also put a place off the globe: looked up again as well.
        let kept = entries.compactMapValues { $0.found.flatMap { $0.isOnTheGlobe ? $0 : nil } }
        let unread = entries.keys.filter { kept[$0] == nil }.sorted()
        if !unread.isEmpty {
            logger.warning(
                "the state file has entries that do not decode or lie off the globe; these city: places are looked up again",
                metadata: ["file": "\(file.path)", "places": "\(unread.joined(separator: ", "))"])
        }
        return kept
    }

    /// One place's entry, nil when it does not decode (an edit by hand, a newer Cloudy's shape).
    private struct Entry: Decodable {
        let found: Found?
        init(from decoder: any Decoder) throws { found = try? Found(from: decoder) }
    }

    static func write(_ found: [String: Found], to file: URL, logger: Logger) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try StorageFile.write(encoder.encode(found), to: file)
        } catch {
            logger.warning(
                "cannot remember resolved places; they will be looked up again after a restart",
                metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }
}
