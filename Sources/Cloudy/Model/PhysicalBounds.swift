/// What Earth's weather can be, generously: a value outside it is an upstream gone wrong (1e308 °C,
/// a humidity of 250 %, a negative wind, a direction of 720°), and becomes no sample, as a
/// `null` does, rather than a reading that the alert rules compare with their thresholds. The
/// bounds sit well beyond the records (−89.2 °C and 56.7 °C in the air, a 113 m/s gust, 870 and
/// 1,084 hPa, a UV index of 43, 1.8 m of rain in a day), so that no real reading is lost.
enum PhysicalBounds {
    static let airTemperatureCelsius = -100.0...70.0
    /// Dew points fall far below the air in dry cold; wind chill and heat index reach beyond it.
    static let dewPointCelsius = -120.0...70.0
    static let apparentTemperatureCelsius = -120.0...100.0
    /// Models put relative humidity a little over 100 % in saturated air.
    static let humidityRatio = 0.0...1.05
    static let ratio = 0.0...1.0
    static let windMetersPerSecond = 0.0...150.0
    static let directionDegrees = 0.0...360.0
    static let pressurePascals = 80_000.0...112_000.0
    /// An hour's or a provider's interval's precipitation, and a day's.
    static let intervalPrecipitationMeters = 0.0...1.0
    static let dailyPrecipitationMeters = 0.0...3.0
    static let uvIndex = 0.0...50.0
    static let visibilityMeters = 0.0...1_000_000.0
    /// The EEA index passes 100 ("extremely poor") and the EPA's 500 in smoke and dust storms.
    static let airQualityIndex = 0.0...2_000.0
    /// A gram of a pollutant in a cubic metre of air, ten times the worst smoke measured.
    static let concentrationGramsPerCubicMeter = 0.0...1.0
    static let pollenGrainsPerCubicMeter = 0.0...1_000_000.0
}

extension Optional where Wrapped == Double {
    /// The value when it lies in `bounds`, else nil (NaN included).
    func within(_ bounds: ClosedRange<Double>) -> Double? {
        flatMap { bounds.contains($0) ? $0 : nil }
    }
}

extension WeatherSnapshot {
    /// This snapshot with every value outside `PhysicalBounds` taken out.
    func physicallyPossible() -> WeatherSnapshot {
        typealias B = PhysicalBounds
        var snapshot = self
        var now = current
        now.temperatureCelsius = now.temperatureCelsius.within(B.airTemperatureCelsius)
        now.apparentTemperatureCelsius = now.apparentTemperatureCelsius.within(B.apparentTemperatureCelsius)
        now.dewPointCelsius = now.dewPointCelsius.within(B.dewPointCelsius)
        now.relativeHumidityRatio = now.relativeHumidityRatio.within(B.humidityRatio)
        now.windSpeedMetersPerSecond = now.windSpeedMetersPerSecond.within(B.windMetersPerSecond)
        now.windGustMetersPerSecond = now.windGustMetersPerSecond.within(B.windMetersPerSecond)
        now.windDirectionDegrees = now.windDirectionDegrees.within(B.directionDegrees)
        now.pressureMslPascals = now.pressureMslPascals.within(B.pressurePascals)
        now.cloudCoverRatio = now.cloudCoverRatio.within(B.ratio)
        now.precipitationMeters = now.precipitationMeters.within(B.intervalPrecipitationMeters)
        now.uvIndex = now.uvIndex.within(B.uvIndex)
        now.visibilityMeters = now.visibilityMeters.within(B.visibilityMeters)
        snapshot.current = now
        snapshot.daily = daily.map { day in
            var day = day
            day.temperatureMaxCelsius = day.temperatureMaxCelsius.within(B.airTemperatureCelsius)
            day.temperatureMinCelsius = day.temperatureMinCelsius.within(B.airTemperatureCelsius)
            day.precipitationSumMeters = day.precipitationSumMeters.within(B.dailyPrecipitationMeters)
            day.precipitationProbabilityRatio = day.precipitationProbabilityRatio.within(B.ratio)
            day.windSpeedMaxMetersPerSecond = day.windSpeedMaxMetersPerSecond.within(B.windMetersPerSecond)
            day.windGustMaxMetersPerSecond = day.windGustMaxMetersPerSecond.within(B.windMetersPerSecond)
            day.uvIndexMax = day.uvIndexMax.within(B.uvIndex)
            return day
        }
        snapshot.hourly = hourly.map { hour in
            var hour = hour
            hour.temperatureCelsius = hour.temperatureCelsius.within(B.airTemperatureCelsius)
            hour.precipitationProbabilityRatio = hour.precipitationProbabilityRatio.within(B.ratio)
            hour.precipitationMeters = hour.precipitationMeters.within(B.intervalPrecipitationMeters)
            hour.windSpeedMetersPerSecond = hour.windSpeedMetersPerSecond.within(B.windMetersPerSecond)
            return hour
        }
        return snapshot
    }
}

extension AirQualityIndices {
    func physicallyPossible() -> AirQualityIndices {
        AirQualityIndices(
            european: european.within(PhysicalBounds.airQualityIndex), epa: epa.within(PhysicalBounds.airQualityIndex))
    }
}

extension AirQualityReport {
    /// This report with every value outside `PhysicalBounds` taken out.
    func physicallyPossible() -> AirQualityReport {
        let pollen = { (counts: [Plant: Double]) in
            counts.filter { PhysicalBounds.pollenGrainsPerCubicMeter.contains($0.value) }
        }
        var report = self
        report.indices = indices.physicallyPossible()
        report.concentrations = concentrations.filter {
            PhysicalBounds.concentrationGramsPerCubicMeter.contains($0.value)
        }
        report.pollen = pollen(self.pollen)
        report.hourly = hourly.map { hour in
            var hour = hour
            hour.indices = hour.indices.physicallyPossible()
            return hour
        }
        report.daily = daily.map { day in
            var day = day
            day.indicesMax = day.indicesMax.physicallyPossible()
            day.pollenMax = pollen(day.pollenMax)
            return day
        }
        return report
    }
}
