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
