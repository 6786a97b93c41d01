/// What the exporter knows about one place's air quality after its latest ask, kept apart from
/// its weather: a failing air-quality API changes this and nothing else.
public struct AirQualityStatus: Sendable, Equatable {
    /// The last good report; kept across failures until it is older than `refresh.stale_after`.
    public var report: AirQualityReport?
    public var lastSuccess: Double?
    public var lastAttempt: Double?
    /// Why the last ask failed; nil after a success.
    public var lastError: String?

    public init(
        report: AirQualityReport? = nil, lastSuccess: Double? = nil, lastAttempt: Double? = nil,
        lastError: String? = nil
    ) {
        self.report = report
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastError = lastError
    }

    /// The last ask succeeded.
    public var isUp: Bool { lastAttempt != nil && lastError == nil && lastSuccess != nil }

    /// The report to show at `now`: nil once the last success is older than `staleAfter`.
    public func freshReport(now: Double, staleAfter: Double) -> AirQualityReport? {
        guard let report, let lastSuccess, now - lastSuccess <= staleAfter else { return nil }
        return report
    }

    /// This status after one ask's `outcome` at `now`.
    public func recording(_ outcome: Result<AirQualityReport, WeatherFetchError>, at now: Double) -> AirQualityStatus {
        var next = self
        next.lastAttempt = now
        switch outcome {
        case .success(let report):
            next.report = report.oneStepPerLabel().physicallyPossible()
            next.lastSuccess = now
            next.lastError = nil
        case .failure(let error):
            next.lastError = error.message
        }
        return next
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
