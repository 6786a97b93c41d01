import Foundation
import Yams

/// A YAML mapping with the path that leads to it, so every read can name the field and line
/// it failed on. Only what `ConfigLoader` needs: typed scalars, enums, lists and sub-mappings.
struct YAMLMapping {
    let node: Node
    let pairs: [(key: String, keyNode: Node, value: Node)]
    let path: String
    let file: String?

    init(_ node: Node, path: String, file: String?) throws(ConfigError) {
        self.node = node
        self.path = path
        self.file = file
        guard case .mapping(let mapping) = node else {
            throw ConfigError(
                file: file, line: node.mark?.line, field: path,
                reason: "must be a mapping of keys to values, found \(describe(node))")
        }
        var pairs: [(key: String, keyNode: Node, value: Node)] = []
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                throw ConfigError(file: file, line: key.mark?.line, field: path, reason: "keys must be plain words")
            }
            pairs.append((scalar.string, key, value))
        }
        self.pairs = pairs
    }

    func fieldPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func error(_ key: String, _ reason: String) -> ConfigError {
        let line = pairs.first(where: { $0.key == key })?.keyNode.mark?.line ?? node.mark?.line
        return ConfigError(file: file, line: line, field: fieldPath(key), reason: reason)
    }

    func has(_ key: String) -> Bool { pairs.contains { $0.key == key } }

    /// Whether `key`'s value is a mapping (for keys that take a word or a mapping).
    func holdsMapping(_ key: String) -> Bool {
        guard case .mapping? = pairs.first(where: { $0.key == key })?.value else { return false }
        return true
    }

    func rejectUnknownKeys(_ allowed: [String]) throws(ConfigError) {
        for pair in pairs where !allowed.contains(pair.key) {
            throw ConfigError(
                file: file, line: pair.keyNode.mark?.line, field: fieldPath(pair.key),
                reason: "unknown key (allowed here: \(allowed.joined(separator: ", ")))")
        }
    }

    /// Whether `key` is written with an empty value (empty, `~` or `null`), which every read
    /// takes as the key's absence.
    func isWrittenEmpty(_ key: String) -> Bool {
        pairs.contains { $0.key == key } && value(key) == nil
    }

    /// The value node, or nil when the key is absent or explicitly null.
    private func value(_ key: String) -> Node? {
        guard let node = pairs.first(where: { $0.key == key })?.value else { return nil }
        if case .scalar(let scalar) = node, scalar.style == .plain,
            ["", "~", "null", "Null", "NULL"].contains(scalar.string)
        {
            return nil
        }
        return node
    }

    private func scalar(_ key: String, expecting: String) throws(ConfigError) -> Node.Scalar? {
        guard let node = value(key) else { return nil }
        guard case .scalar(let scalar) = node else {
            throw error(key, "must be \(expecting), found \(describe(node))")
        }
        return scalar
    }

    func string(_ key: String) throws(ConfigError) -> String? {
        try scalar(key, expecting: "a string")?.string
    }

    /// A scalar's text, quoted or not; a list or mapping is refused as not being `expecting`.
    func text(_ key: String, expecting: String) throws(ConfigError) -> String? {
        try scalar(key, expecting: expecting)?.string
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let scalar = try scalar(key, expecting: "true or false") else { return nil }
        switch scalar.style == .plain ? scalar.string : "" {
        case "true": return true
        case "false": return false
        default: throw error(key, "must be true or false, found \"\(scalar.string)\"")
        }
    }

    func url(_ key: String) throws(ConfigError) -> String? {
        guard var text = try string(key) else { return nil }
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), text.count > 8,
            !text.contains(" "), !text.contains("?"), !text.contains("#"),
            let parts = URLComponents(string: text), parts.encodedHost?.isEmpty == false
        else {
            throw error(key, "\"\(text)\" is not an http:// or https:// base URL")
        }
        guard Self.portIsValid(in: text) else {
            throw error(key, "\"\(text)\": the port must be 1 to 65535, in at most 5 digits")
        }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Whether the port written in `url`, if any, is 1…65535 (none, or a colon with none, is the
    /// scheme's). Read from the text as written: Foundation gives no `port` for one past an Int,
    /// and with a non-ASCII host drops it altogether from what it parses.
    static func portIsValid(in url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        var authority = url[scheme.upperBound...].prefix { $0 != "/" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let bracket = authority.firstIndex(of: "]") {
            authority = authority[authority.index(after: bracket)...]  // [::1]:8080
        }
        guard let colon = authority.lastIndex(of: ":") else { return true }
        let port = authority[authority.index(after: colon)...]
        return port.isEmpty
            || (port.count <= 5 && port.allSatisfy { ("0"..."9").contains($0) } && (1...65535).contains(Int(port) ?? 0))
    }

    func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double? {
        guard let scalar = try scalar(key, expecting: "a number") else { return nil }
        guard scalar.style == .plain, let value = Double(scalar.string), value.isFinite else {
            throw error(key, "must be a number, found \"\(scalar.string)\"")
        }
        guard range.contains(value) else {
            throw error(
                key,
                "must be between \(format(range.lowerBound)) and \(format(range.upperBound)), found \(scalar.string)")
        }
        return value
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let scalar = try scalar(key, expecting: "a whole number") else { return nil }
        guard scalar.style == .plain, let value = Int(scalar.string) else {
            throw error(key, "must be a whole number, found \"\(scalar.string)\"")
        }
        guard range.contains(value) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(value)")
        }
        return value
    }

    func duration(_ key: String, atLeast minimum: Double) throws(ConfigError) -> Double? {
        guard let scalar = try scalar(key, expecting: "a duration") else { return nil }
        guard let seconds = PrometheusDuration.parse(scalar.string) else {
            throw error(key, "\"\(scalar.string)\" is not a duration; write it like 30s, 10m or 1h")
        }
        guard seconds >= minimum else {
            throw error(key, "must be at least \(PrometheusDuration.format(minimum)), found \(scalar.string)")
        }
        guard seconds <= PrometheusDuration.longest else {
            throw error(key, "must be at most 292y (the longest duration Prometheus reads), found \(scalar.string)")
        }
        return seconds
    }

    func oneOf<Choice: RawRepresentable & CaseIterable>(_ key: String, _ type: Choice.Type) throws(ConfigError)
        -> Choice?
    where Choice.RawValue == String {
        guard let text = try string(key) else { return nil }
        return try choice(text, key: key, type)
    }

    /// One value or a list of them (`celsius` or `[celsius, fahrenheit]`), without duplicates.
    func oneOrMore<Choice: RawRepresentable & CaseIterable & Equatable>(_ key: String, _ type: Choice.Type)
        throws(ConfigError) -> [Choice]?
    where Choice.RawValue == String {
        guard let node = value(key) else { return nil }
        switch node {
        case .scalar(let scalar):
            return [try choice(scalar.string, key: key, type)]
        case .sequence(let sequence):
            var out: [Choice] = []
            for item in sequence {
                guard case .scalar(let scalar) = item else {
                    throw error(key, "list items must be unit names, found \(describe(item))")
                }
                let value = try choice(scalar.string, key: key, type)
                if out.contains(value) { throw error(key, "lists \(scalar.string) twice") }
                out.append(value)
            }
            if out.isEmpty { throw error(key, "must name at least one unit") }
            return out
        default:
            throw error(key, "must be a unit name or a list of them, found \(describe(node))")
        }
    }

    private func choice<Choice: RawRepresentable & CaseIterable>(_ text: String, key: String, _ type: Choice.Type)
        throws(ConfigError) -> Choice
    where Choice.RawValue == String {
        guard let value = Choice(rawValue: text) else {
            let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(key, "unknown value \"\(text)\" (one of: \(allowed))")
        }
        return value
    }

    func mapping(_ key: String) throws(ConfigError) -> YAMLMapping? {
        guard let node = value(key) else { return nil }
        return try YAMLMapping(node, path: fieldPath(key), file: file)
    }

    func sequence(_ key: String) throws(ConfigError) -> YAMLSequence? {
        guard let node = value(key) else { return nil }
        guard case .sequence(let sequence) = node else {
            throw error(key, "must be a list, found \(describe(node))")
        }
        return YAMLSequence(items: Array(sequence), line: node.mark?.line, path: fieldPath(key), file: file)
    }
}

struct YAMLSequence {
    let items: [Node]
    let line: Int?
    let path: String
    let file: String?

    func error(_ reason: String) -> ConfigError {
        ConfigError(file: file, line: line, field: path, reason: reason)
    }
}

private func describe(_ node: Node) -> String {
    switch node {
    case .scalar(let scalar): return "\"\(scalar.string)\""
    case .mapping: return "a mapping"
    case .sequence: return "a list"
    case .alias: return "an alias"
    }
}

private func format(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
}

extension YAMLMapping {
    /// A YAML text's node tree. Cloudy reads every scalar as its text and types it itself, naming
    /// the field in any error, so Yams' implicit typing (a regular expression per scalar, a tenth
    /// of a 1,000-place start-up's instructions) is not asked for. Without it, keys that differ
    /// only in quoting (`1` and `"1"`) are duplicates, as they are to Cloudy's lookup.
    static func compose(_ yaml: String) throws -> Node? {
        try Yams.compose(yaml: yaml, .basic)
    }

    /// `compose`'s error as a `ConfigError` of `file` with the line Yams names: the same words
    /// for `cloudy.yml` and the web config (`file:LINE: invalid YAML: …`, `duplicate key: …`).
    static func syntaxError(_ error: Error, file: String?) -> ConfigError {
        switch error {
        case YamlError.scanner(let context, let problem, let mark, _),
            YamlError.parser(let context, let problem, let mark, _),
            YamlError.composer(let context, let problem, let mark, _):
            let detail = context.map { "\(problem) (\($0.text))" } ?? problem
            return ConfigError(file: file, line: mark.line, field: "", reason: "invalid YAML: \(detail)")
        case YamlError.duplicatedKeysInMapping(let duplicates, let context):
            return YAMLDuplicateKey.error(duplicates, first: context.mark, in: context.text, file: file)
        default:
            return ConfigError(file: file, field: "", reason: "invalid YAML: \(error)")
        }
    }
}
