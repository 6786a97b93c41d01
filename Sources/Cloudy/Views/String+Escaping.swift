extension String {
    /// The text with every Unicode scalar that `replacement` maps replaced by what it returns:
    /// the one loop behind the log's quoted values.
    func escaped(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if let replaced = replacement(scalar) {
                out += replaced
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
