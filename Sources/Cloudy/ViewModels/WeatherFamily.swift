/// One weather family of a section (current conditions, a forecast day, a forecast hour): its
/// name, HELP text and the value it reads, in the model's base units. A family `.perTemperatureUnit`
/// or `.perWindSpeedUnit` is one family per unit the place is shown in, the unit at the end of
/// its name (`weather_temperature_fahrenheit`); its HELP says `{unit}` where the unit's words go.
/// Names are part of the exporter's contract: docs/metrics.md lists them, and a test keeps the
/// two in step.
struct WeatherFamily<Section>: Sendable {
    enum Measure: Sendable {
        case baseUnit
        case perTemperatureUnit
        case perWindSpeedUnit
    }

    let measure: Measure
    let value: @Sendable (Section) -> Double?
    /// By unit (`TemperatureUnit` or `WindSpeedUnit` raw value), or "" for a base-unit family.
    private let descriptors: [String: MetricDescriptor]

    /// A family in the model's base unit.
    init(_ name: String, _ help: String, value: @escaping @Sendable (Section) -> Double?) {
        self.init(name, .baseUnit, help, value: value)
    }

    init(_ name: String, _ measure: Measure, _ help: String, value: @escaping @Sendable (Section) -> Double?) {
        self.measure = measure
        self.value = value
        let units: [(suffix: String, words: String)] =
            switch measure {
            case .baseUnit: [("", "")]
            case .perTemperatureUnit: TemperatureUnit.allCases.map { ($0.rawValue, $0.words) }
            case .perWindSpeedUnit: WindSpeedUnit.allCases.map { ($0.rawValue, $0.words) }
            }
        var descriptors: [String: MetricDescriptor] = [:]
        for unit in units {
            let fullName = unit.suffix.isEmpty ? name : name + "_" + unit.suffix
            let fullHelp = help.replacingOccurrences(of: "{unit}", with: unit.words) + " (cached from the last refresh)"
            descriptors[unit.suffix] = MetricDescriptor(fullName, .gauge, fullHelp)
        }
        self.descriptors = descriptors
    }

    /// The descriptor for `unit` (a unit's raw value; "" for a base-unit family).
    func descriptor(_ unit: String = "") -> MetricDescriptor { descriptors[unit]! }
}

extension TemperatureUnit {
    /// How a HELP text names the unit.
    var words: String { self == .celsius ? "degrees Celsius" : "degrees Fahrenheit" }
}

extension WindSpeedUnit {
    /// How a HELP text names the unit: "kilometers per hour".
    var words: String { String(rawValue.map { $0 == "_" ? " " : $0 }) }
}
