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

    /// What the file holds; empty (with a log line) when it is missing, too big or unreadable.
    static func read(_ file: URL, logger: Logger) -> [String: Found] {
        let size = StorageFile.size(of: file)
        // Read to the limit whatever the size says: a link to a device (/dev/zero) has none.
        let data = size.map { $0 <= maxFileBytes } == true ? try? StorageFile.read(file, atMost: maxFileBytes) : nil
        if data == nil, let size {
            logger.warning(
                "cannot read the state file; city: places are looked up again",
                metadata: [
                    "file": "\(file.path)",
                    "reason": "\(size > maxFileBytes ? "over \(maxFileBytes) bytes" : "unreadable")",
                ])
        }
        guard let data else { return [:] }
        do {
            return try JSONDecoder().decode([String: Found].self, from: data)
        } catch {
            logger.warning("ignoring unreadable state file", metadata: ["file": "\(file.path)", "error": "\(error)"])
            return [:]
        }
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
