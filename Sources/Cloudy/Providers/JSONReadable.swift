/// A type read straight from JSON bytes, field by field, without building a document first.
protocol JSONReadable {
    init(json: inout JSONReader) throws
}

/// A section of an answer whose fields Cloudy reads are all of one type (numbers, series or unit
/// names), read by its table of field names (the API's own); fields not in the table are skipped,
/// and a field that is null or absent stays nil.
protocol JSONSection: JSONReadable {
    associatedtype Field: JSONReadable
    init()
    static var fields: [(name: StaticString, path: WritableKeyPath<Self, Field?> & Sendable)] { get }
}

extension JSONSection {
    init(json: inout JSONReader) throws {
        var section = Self()
        try json.readObject { key, json in
            guard let field = Self.fields.first(where: { $0.name ~= key }) else { return try json.skipValue() }
            section[keyPath: field.path] = try json.readOptional(Field.self)
        }
        self = section
    }
}

extension Double: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readDouble() }
}

extension String: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readString() }
}

extension Int: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readInt() }
}

extension Bool: JSONReadable {
    init(json: inout JSONReader) throws { self = try json.readBool() }
}

/// An object whose every value reads as `Value`, such as a section's units by variable.
extension Dictionary: JSONReadable where Key == String, Value: JSONReadable {
    init(json: inout JSONReader) throws {
        var entries: [String: Value] = [:]
        try json.readObject { key, json in entries[key.string] = try Value(json: &json) }
        self = entries
    }
}
