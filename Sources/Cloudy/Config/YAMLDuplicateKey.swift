import Yams

/// A key written twice in one mapping, named as every other config error is: by the line of the
/// second (the one to mend) and the field's path, `c.yml:3: refresh.interval: duplicate key`.
/// Yams refuses such a text whole and names the first of the two keys only, so the path comes
/// from the same text composed again with the second key renamed.
enum YAMLDuplicateKey {
    /// What the renamed key is called while its path is looked for.
    static let stand = "cloudy-duplicate-key-looked-for"

    static func error(_ duplicates: [String], first: Mark, in text: String, file: String?) -> ConfigError {
        let key = duplicates.first ?? ""
        guard let second = secondKey(key, after: first, in: text) else {
            return ConfigError(
                file: file, line: first.line, field: "", reason: "duplicate key: \(duplicates.joined(separator: ", "))")
        }
        let line = text[..<second.lowerBound].reduce(1) { $0 + (isLineBreak($1) ? 1 : 0) }
        // Every key the mapping has twice renamed (the first to `stand`), from the last on, so
        // the ranges found stay where they were.
        var renamed = text
        let seconds =
            [(second, stand)]
            + duplicates.dropFirst().enumerated().compactMap { index, other in
                secondKey(other, after: first, in: text).map { ($0, "\(stand)-\(index)") }
            }
        for (range, name) in seconds.sorted(by: { $0.0.lowerBound > $1.0.lowerBound }) {
            renamed.replaceSubrange(range, with: name)
        }
        guard let root = try? YAMLMapping.compose(renamed), let parent = path(to: stand, in: root, at: "") else {
            // Another duplicate in the renamed text: the key and its line still say where.
            return ConfigError(
                file: file, line: line, field: "", reason: "duplicate key: \(duplicates.joined(separator: ", "))")
        }
        let others = duplicates.dropFirst()
        return ConfigError(
            file: file, line: line, field: parent.isEmpty ? key : "\(parent).\(key)",
            reason: "duplicate key" + (others.isEmpty ? "" : " (so is \(others.joined(separator: ", ")))"))
    }

    /// Where the second `key` of the mapping whose first is at `first` (Yams' mark: 1-based line
    /// and column) is written, quotes included. In a block mapping: the next line that holds
    /// `key:` at the first's column, nothing but spaces before it. In a flow mapping: the next key
    /// `key` of that mapping on the first's line (one that spans lines is not looked through).
    static func secondKey(_ key: String, after first: Mark, in text: String) -> Range<String.Index>? {
        // YAML's line breaks, as Yams counts them: "\r\n" is one Character, not a "\n".
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: isLineBreak)
        guard first.line >= 1, first.line <= lines.count else { return nil }
        let indent = max(first.column - 1, 0)
        let spellings = [key, "\"\(key)\"", "'\(key)'"]
        func written(at start: Substring.Index, in line: Substring) -> Range<String.Index>? {
            for spelling in spellings where line[start...].hasPrefix(spelling) {
                let end = line.index(start, offsetBy: spelling.count)
                if line[end...].drop(while: { $0 == " " }).hasPrefix(":") { return start..<end }
            }
            return nil
        }
        for line in lines[first.line...] {  // 0-based: the lines after the first's
            guard line.count > indent, line.prefix(indent).allSatisfy({ $0 == " " }) else { continue }
            if let found = written(at: line.index(line.startIndex, offsetBy: indent), in: line) { return found }
        }
        // A flow mapping: from the first key on, the next key of the same mapping (after a comma
        // outside brackets and quotes) that is `key`. Yams' column counts Unicode scalars.
        let line = lines[first.line - 1]
        let scalars = line.unicodeScalars
        guard let start = scalars.index(scalars.startIndex, offsetBy: indent, limitedBy: scalars.endIndex),
            let firstKey = written(at: start, in: line)
        else { return nil }
        var depth = 0
        var quote: Character?
        var index = firstKey.upperBound
        while index < line.endIndex {
            let character = line[index]
            index = line.index(after: index)
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "\"", "'": quote = character
            case "{", "[": depth += 1
            case "}", "]":
                depth -= 1
                if depth < 0 { return nil }  // the end of the first's mapping
            case "," where depth == 0:
                let next = line[index...].firstIndex { $0 != " " } ?? line.endIndex
                if let found = written(at: next, in: line) { return found }
            default: break
            }
        }
        return nil
    }

    /// The path of the mapping that holds the key `name`: "" for the top level, "refresh",
    /// "locations[0].alerts".
    static func path(to name: String, in node: Node, at path: String) -> String? {
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                let written = key.scalar?.string ?? ""
                if written == name { return path }
                if let found = self.path(to: name, in: value, at: path.isEmpty ? written : "\(path).\(written)") {
                    return found
                }
            }
        case .sequence(let sequence):
            for (index, item) in sequence.enumerated() {
                if let found = self.path(to: name, in: item, at: "\(path)[\(index)]") { return found }
            }
        case .scalar, .alias:
            break
        }
        return nil
    }

    private static func isLineBreak(_ character: Character) -> Bool {
        "\n\r\r\n\u{85}\u{2028}\u{2029}".contains(character)
    }
}
