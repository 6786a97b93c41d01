/// Air quality and pollen for one place, as one source answered it, in base units: g/m³ for
/// concentrations, grains/m³ for pollen, the indices on their own scales, unix seconds. A value
/// the source did not send (JSON `null`, pollen outside Europe, a pollutant it lacks) is absent:
/// no sample, never 0.
public struct AirQualityReport: Sendable, Equatable {
    /// When these values were valid, unix seconds.
    public var observedAt: Double?
    public var indices: AirQualityIndices
    /// Grams per cubic metre.
    public var concentrations: [Pollutant: Double]
    /// Grains per cubic metre, per plant, at the current hour.
    public var pollen: [Plant: Double]
    /// Steps 1… hours ahead of the current whole hour.
    public var hourly: [HourlyAirQuality]
    /// Maxima per local calendar day of the place, day 0 = today.
    public var daily: [DailyAirQuality]

    public init(
        observedAt: Double? = nil, indices: AirQualityIndices = .init(), concentrations: [Pollutant: Double] = [:],
        pollen: [Plant: Double] = [:], hourly: [HourlyAirQuality] = [], daily: [DailyAirQuality] = []
    ) {
        self.observedAt = observedAt
        self.indices = indices
        self.concentrations = concentrations
        self.pollen = pollen
        self.hourly = hourly
        self.daily = daily
    }
}

/// The two air-quality indices Cloudy exposes. OpenWeatherMap's 1–5 index is neither, so its
/// reports carry none (docs/providers.md).
public struct AirQualityIndices: Sendable, Equatable {
    /// The European Environment Agency's index (0–100+, above 100 "extremely poor").
    public var european: Double?
    /// The US EPA's AQI (0–500).
    public var epa: Double?

    public init(european: Double? = nil, epa: Double? = nil) {
        self.european = european
        self.epa = epa
    }
}

public struct HourlyAirQuality: Sendable, Equatable {
    public var hoursAhead: Int
    public var time: Double
    public var indices: AirQualityIndices

    public init(hoursAhead: Int, time: Double, indices: AirQualityIndices) {
        self.hoursAhead = hoursAhead
        self.time = time
        self.indices = indices
    }
}

public struct DailyAirQuality: Sendable, Equatable {
    /// Days after the air-quality answer's own today, as `day` on /metrics.
    public var daysAhead: Int
    /// The day's local date, as days since 1970-01-01 in the zone of the answer: what the pages
    /// match with a weather day, whose answer may count its days from another today (the two
    /// feeds refresh apart, and across midnight day 1 is not the same date in both).
    public var localDay: Int?
    public var indicesMax: AirQualityIndices
    public var pollenMax: [Plant: Double]

    public init(
        daysAhead: Int, localDay: Int? = nil, indicesMax: AirQualityIndices = .init(), pollenMax: [Plant: Double] = [:]
    ) {
        self.daysAhead = daysAhead
        self.localDay = localDay
        self.indicesMax = indicesMax
        self.pollenMax = pollenMax
    }
}

/// The pollutants with a concentration family; the raw value is the name in the family
/// (`weather_air_<raw>_grams_per_cubic_meter`) and Open-Meteo's variable.
public enum Pollutant: String, Sendable, CaseIterable {
    case pm25 = "pm2_5"
    case pm10
    case ozone
    case nitrogenDioxide = "nitrogen_dioxide"
    case sulphurDioxide = "sulphur_dioxide"
    case carbonMonoxide = "carbon_monoxide"

    /// µg/m³, as the APIs send concentrations, to g/m³: the decimal the API wrote, moved six
    /// places, so 8.4 µg/m³ is the double nearest 8.4e-6 (dividing by 10⁶ gives
    /// 8.400000000000001e-06, right to 1e-21 but not what anyone wrote).
    public static func gramsPerCubicMeter(micrograms: Double) -> Double {
        guard micrograms.isFinite else { return micrograms }
        let parts = "\(micrograms)".split(separator: "e")
        let exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
        return Double("\(parts[0])e\(exponent - 6)") ?? micrograms / 1_000_000
    }
}

/// The plants whose pollen Open-Meteo forecasts over Europe (the `plant` label's values).
public enum Plant: String, Sendable, CaseIterable {
    case alder, birch, grass, mugwort, olive, ragweed
}
