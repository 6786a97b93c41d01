/// What a view model hands the exposition views: metric families with their samples, before
/// any text is written. Families come out sorted by name (as the Go client does), samples in
/// the order they were added (places in config order, then days or hours ahead).
public struct MetricFamilies: Sendable {
    public private(set) var families: [MetricFamily] = []
    private var index: [String: Int] = [:]

    public init() {}

    public mutating func add(
        _ descriptor: MetricDescriptor, labels: [(String, String)] = [], value: Double?, suffix: String = ""
    ) {
        guard value != nil else { return }
        add(at: position(of: descriptor), labels: labels, value: value, suffix: suffix)
    }

    /// Where `descriptor`'s family is (added, empty, when it is new): for a view model that adds
    /// many samples to one family, so the family is looked up by name once, not per sample.
    /// Two view models that name one family alike must describe it alike: a new source's family
    /// that took a name in use would have its samples merged under the other's help and type.
    public mutating func position(of descriptor: MetricDescriptor) -> Int {
        if let existing = index[descriptor.name] {
            assert(
                families[existing].descriptor == descriptor,
                "\(descriptor.name) added as \(descriptor) and as \(families[existing].descriptor)")
            return existing
        }
        index[descriptor.name] = families.count
        families.append(MetricFamily(descriptor: descriptor))
        return families.count - 1
    }

    /// Adds a sample to the family at `position` (from `position(of:)`).
    public mutating func add(at position: Int, labels: [(String, String)], value: Double?, suffix: String = "") {
        guard let value else { return }  // a value the provider did not send is no sample, never 0
        families[position].samples.append(MetricSample(suffix: suffix, labels: labels, value: value))
    }

    /// Adds a family that has no samples yet (so HELP/TYPE appear, e.g. for an empty counter).
    public mutating func declare(_ descriptor: MetricDescriptor) {
        _ = position(of: descriptor)
    }

    public func sorted() -> [MetricFamily] {
        families.sorted { $0.descriptor.name < $1.descriptor.name }
    }
}

public enum MetricType: String, Sendable {
    case gauge
    case counter
    case histogram
}

public struct MetricDescriptor: Sendable, Equatable {
    /// The family name; for counters without `_total` (the sample name adds it).
    public var name: String
    public var type: MetricType
    public var help: String

    public init(_ name: String, _ type: MetricType, _ help: String) {
        self.name = name
        self.type = type
        self.help = help
    }
}

public struct MetricFamily: Sendable {
    public var descriptor: MetricDescriptor
    public var samples: [MetricSample] = []
}

public struct MetricSample: Sendable {
    /// Appended to the family name: `_total`, `_bucket`, `_sum`, `_count`, or empty.
    public var suffix: String
    public var labels: [(String, String)]
    public var value: Double
}
