/// A place's air quality as its page shows it: each index with its band's name and colour, the
/// pollutants in µg/m³ (how people read them; the metrics stay in g/m³), and pollen by plant
/// where there is any. Built from a fresh report only.
public struct AirQualityViewModel: Sendable, Equatable {
    /// One index: its number, its scale's band for it, and the band's class, which the
    /// stylesheet colours with the scale's official colour (no inline style under the CSP).
    public struct Index: Sendable, Equatable {
        public let scale: String
        public let value: String
        public let band: String
        public let bandClass: String
    }

    public struct Reading: Sendable, Equatable {
        public let label: String
        public let value: String
    }

    public let indices: [Index]
    public let pollutants: [Reading]
    /// Plants with pollen in the air now; nil outside Europe, out of season, or when not asked.
    public let pollen: Pollen?
    /// Whether an index or a pollutant has a value (an answer may have none for the place).
    public var hasReadings: Bool { !indices.isEmpty || !pollutants.isEmpty }

    public struct Pollen: Sendable, Equatable {
        public let plants: [Reading]
    }

    public init(report: AirQualityReport) {
        indices = [Self.european(report.indices.european), Self.epa(report.indices.epa)].compactMap { $0 }
        pollutants = Pollutant.allCases.compactMap { pollutant in
            report.concentrations[pollutant].map {
                Reading(label: pollutant.words, value: ValueFormat.number($0 * 1_000_000) + " µg/m³")
            }
        }
        let plants = Plant.allCases.compactMap { plant -> Reading? in
            guard let grains = report.pollen[plant], grains > 0 else { return nil }
            return Reading(label: plant.words, value: ValueFormat.number(grains) + " grains/m³")
        }
        pollen = plants.isEmpty ? nil : Pollen(plants: plants)
    }

    /// The European index's bands (EEA, revised 2024): up to 20 good, 40 fair, 60 moderate,
    /// 80 poor, 100 very poor, above that extremely poor.
    static let europeanBands = ["good", "fair", "moderate", "poor", "very poor", "extremely poor"]
    /// The EPA's bands: up to 50, 100, 150, 200, 300, above.
    static let epaBands = [
        "good", "moderate", "unhealthy for sensitive groups", "unhealthy", "very unhealthy", "hazardous",
    ]

    static func european(_ value: Double?) -> Index? {
        guard let value, value.isFinite, value >= 0 else { return nil }
        let band = [20.0, 40, 60, 80, 100].firstIndex { value <= $0 } ?? 5
        return Index(
            scale: "European AQI", value: ValueFormat.whole(value), band: europeanBands[band],
            bandClass: "aqi-eu-\(band + 1)")
    }

    static func epa(_ value: Double?) -> Index? {
        guard let value, value.isFinite, value >= 0 else { return nil }
        // The EPA reports whole numbers: 50.4 is still good, 50.5 is 51, moderate.
        let band = [50.0, 100, 150, 200, 300].firstIndex { value.rounded() <= $0 } ?? 5
        return Index(
            scale: "US AQI (EPA)", value: ValueFormat.whole(value), band: epaBands[band],
            bandClass: "aqi-us-\(band + 1)")
    }
}

extension Plant {
    /// How a page names the plant.
    var words: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
