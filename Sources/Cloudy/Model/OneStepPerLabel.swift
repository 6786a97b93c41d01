/// One sample per series, whatever the answer holds: an answer that repeats a time, or stamps two
/// days onto one date, would put two samples on one series (`day="1"` twice is an exposition
/// Prometheus and promtool reject, and two "Tomorrow" rows on the pages). The store keeps the
/// first step of each day and each hour ahead.
extension Array {
    /// The elements, keeping only the first of each `key`, in order; no copy when the keys
    /// already increase (every sound answer).
    func firstOfEach(_ key: (Element) -> Int) -> [Element] {
        if zip(self, dropFirst()).allSatisfy({ key($0) < key($1) }) { return self }
        var seen = Set<Int>()
        return filter { seen.insert(key($0)).inserted }
    }
}

extension WeatherSnapshot {
    /// This snapshot with one step per `daysAhead` and per `hoursAhead`.
    func oneStepPerLabel() -> WeatherSnapshot {
        var snapshot = self
        snapshot.daily = daily.firstOfEach(\.daysAhead)
        snapshot.hourly = hourly.firstOfEach(\.hoursAhead)
        return snapshot
    }
}

extension AirQualityReport {
    /// This report with one step per `daysAhead` and per `hoursAhead`.
    func oneStepPerLabel() -> AirQualityReport {
        var report = self
        report.daily = daily.firstOfEach(\.daysAhead)
        report.hourly = hourly.firstOfEach(\.hoursAhead)
        return report
    }
}
