/// A report one source gives for one place, as a `SourceStatus` keeps it.
public protocol SourceReport: Sendable, Equatable {
    /// The report as kept and shown: without what the page must not show (values no
    /// instrument reads, two steps under one label). As it came by default.
    func keptForShowing() -> Self
}

extension SourceReport {
    public func keptForShowing() -> Self { self }
}

/// What the status page says of a source beside the weather whatever its report: whether the
/// last ask failed, and how old what is still shown of it is (`SourceStatus` of any source).
public protocol SourceOutcome: Sendable {
    var lastSuccess: Double? { get }
    /// Why the last ask failed; nil after a success.
    var lastError: String? { get }
    /// Whether a report is still shown at `now` (its last success not older than `staleAfter`).
    func hasFreshReport(now: Double, staleAfter: Double) -> Bool
}

/// What the exporter knows about one place from one source beside the weather (air quality, a
/// new upstream) after its latest ask: a failing source changes this and nothing else. Each
/// place keeps it in a field of its `PlaceStatus`, recorded by a `StatusRecorder`.
public struct SourceStatus<Report: SourceReport>: SourceOutcome, Equatable {
    /// The last good report; kept across failures until it is older than `refresh.stale_after`.
    public var report: Report?
    public var lastSuccess: Double?
    public var lastAttempt: Double?
    /// Why the last ask failed; nil after a success.
    public var lastError: String?

    public init(report: Report? = nil, lastSuccess: Double? = nil, lastAttempt: Double? = nil, lastError: String? = nil)
    {
        self.report = report
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastError = lastError
    }

    /// The last ask succeeded.
    public var isUp: Bool { lastAttempt != nil && lastError == nil && lastSuccess != nil }

    /// The report to show at `now`: nil once the last success is older than `staleAfter`.
    public func freshReport(now: Double, staleAfter: Double) -> Report? {
        guard let report, let lastSuccess, now - lastSuccess <= staleAfter else { return nil }
        return report
    }

    public func hasFreshReport(now: Double, staleAfter: Double) -> Bool {
        freshReport(now: now, staleAfter: staleAfter) != nil
    }

    /// This status after one ask's `outcome` at `now`.
    public func recording(_ outcome: Result<Report, WeatherFetchError>, at now: Double) -> SourceStatus {
        var next = self
        next.lastAttempt = now
        switch outcome {
        case .success(let report):
            next.report = report.keptForShowing()
            next.lastSuccess = now
            next.lastError = nil
        case .failure(let error):
            next.lastError = error.message
        }
        return next
    }
}
