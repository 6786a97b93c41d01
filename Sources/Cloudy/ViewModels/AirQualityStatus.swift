/// What the exporter knows about one place's air quality after its latest ask, kept apart from
/// its weather: a failing air-quality API changes this and nothing else.
public typealias AirQualityStatus = SourceStatus<AirQualityReport>

extension AirQualityReport: SourceReport {
    /// One value per label, and none that no instrument reads.
    public func keptForShowing() -> AirQualityReport {
        oneStepPerLabel().physicallyPossible()
    }
}

extension PlaceStatus {
    /// This status with no air quality, for pages of a config without `air_quality:`.
    var withoutAirQuality: PlaceStatus {
        var status = self
        status.airQuality = nil
        return status
    }
}

extension AirQualityReport {
    /// What of this report the source `settings` name gives too. A reload that turns pollen off,
    /// or moves to a source without the indices (OpenWeatherMap's), keeps none of them from the
    /// source before while the new one has not answered: their series leave at once, and their
    /// alerts with them, rather than at `refresh.stale_after`.
    func given(by settings: AirQualitySettings) -> AirQualityReport {
        var report = self
        if !settings.pollen || settings.source == .openWeatherMap {
            report.pollen = [:]
            for index in report.daily.indices { report.daily[index].pollenMax = [:] }
        }
        if settings.source == .openWeatherMap {
            report.indices = AirQualityIndices()
            report.hourly = []
            report.daily = []
        }
        return report
    }
}
