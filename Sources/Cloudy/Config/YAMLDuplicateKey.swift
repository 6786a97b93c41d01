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
        let plain = { (line: Int) in
            ConfigError(
                file: file, line: line, field: "", reason: "duplicate key: \(duplicates.joined(separator: ", "))")
        }
        guard let found = renaming(duplicates, after: first, in: text, as: stand) else { return plain(first.line) }
        var renamed = found.text
        var originals = found.originals
        let line = text[..<found.renamed.lowerBound].reduce(1) { $0 + (isLineBreak($1) ? 1 : 0) }
        // Duplicates in other mappings (Yams names the innermost first): each renamed in turn.
        for round in 1...20 {
            do {
                guard let root = try YAMLMapping.compose(renamed),
                    let parent = path(to: stand, in: root, at: "", originals: originals)
                else { return plain(line) }
                let others = duplicates.dropFirst()
                return ConfigError(
                    file: file, line: line, field: parent.isEmpty ? key : "\(parent).\(key)",
                    reason: "duplicate key" + (others.isEmpty ? "" : " (so is \(others.joined(separator: ", ")))"))
            } catch YamlError.duplicatedKeysInMapping(let more, let context) {
                guard let next = renaming(more, after: context.mark, in: context.text, as: "\(stand)-\(round)")
                else { return plain(line) }
                renamed = next.text
                originals.merge(next.originals) { old, _ in old }
            } catch {
                return plain(line)
            }
        }
        return plain(line)
    }

    /// `text` with the second of each of `keys` (the keys a mapping has twice; the first's first
    /// at `first`) renamed: the first key's to `name`, the others' to `name-1`, `name-2`…, from
    /// the last on, so the ranges found stay where they were; with each new name's key, and
    /// where the first key's second was in `text`. nil when that is not found.
    static func renaming(_ keys: [String], after first: Mark, in text: String, as name: String)
        -> (text: String, originals: [String: String], renamed: Range<String.Index>)?
    {
        let seconds = keys.enumerated().compactMap { index, key in
            secondKey(key, after: first, in: text).map {
                (range: $0, name: index == 0 ? name : "\(name)-\(index)", key: key)
            }
        }
        guard let firstKey = seconds.first, firstKey.name == name else { return nil }
        var renamed = text
        for second in seconds.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            renamed.replaceSubrange(second.range, with: second.name)
        }
        return (renamed, Dictionary(seconds.map { ($0.name, $0.key) }) { old, _ in old }, firstKey.range)
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
    /// "locations[0].alerts"; a key renamed on the way is named as written (`originals`).
    static func path(to name: String, in node: Node, at path: String, originals: [String: String]) -> String? {
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                let written = key.scalar?.string ?? ""
                if written == name { return path }
                let field = originals[written] ?? written
                if let found = self.path(
                    to: name, in: value, at: path.isEmpty ? field : "\(path).\(field)", originals: originals)
                {
                    return found
                }
            }
        case .sequence(let sequence):
            for (index, item) in sequence.enumerated() {
                if let found = self.path(to: name, in: item, at: "\(path)[\(index)]", originals: originals) {
                    return found
                }
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
