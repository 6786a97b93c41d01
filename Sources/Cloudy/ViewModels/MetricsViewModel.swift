/// Turns one place's weather into metric samples in the units it is *given* — the exporter's
/// counterpart of the app's day and week view models. A metric's name states its unit, so the
/// unit settings decide which families appear: `[celsius, fahrenheit]` yields both.
public struct MetricsViewModel {
    public let status: PlaceStatus
    public let units: UnitSettings
    public let provider: ProviderName
    /// When the page is rendered (unix seconds); decides staleness.
    public let now: Double
    public let staleAfter: Double
    /// The alerts the provider gives no daily value for (`Config.lacks`): they cannot fire, so
    /// their thresholds are no series (a dashboard would draw a line nothing can cross).
    public let lacking: Set<WeatherAlert>

    public init(
        status: PlaceStatus, units: UnitSettings, provider: ProviderName, now: Double, staleAfter: Double,
        lacking: Set<WeatherAlert> = []
    ) {
        self.status = status
        self.units = units
        self.provider = provider
        self.now = now
        self.staleAfter = staleAfter
        self.lacking = lacking
    }

    public func addSamples(to page: inout MetricFamilies) {
        let place = status.place
        let location = [("location", place.name)]
        page.add(WeatherFamilies.up, labels: location, value: status.isUp ? 1 : 0)
        page.add(WeatherFamilies.lastSuccess, labels: location, value: status.lastSuccess)
        page.add(WeatherFamilies.lastAttempt, labels: location, value: status.lastAttempt)
        if let located = status.location {
            let timezone = located.timezone ?? status.snapshot?.timezone ?? ""
            page.add(
                WeatherFamilies.locationInfo,
                labels: [
                    ("location", place.name), ("latitude", Self.coordinate(located.latitude)),
                    ("longitude", Self.coordinate(located.longitude)), ("timezone", timezone),
                    ("provider", provider.rawValue),
                ], value: 1)
        }
        if let snapshot = status.snapshot {
            // In the zone the place's pages count its days in (its `timezone:`, else the answer's).
            page.add(WeatherFamilies.utcOffset, labels: location, value: Double(snapshot.utcOffsets(now)))
        }
        AlertThresholdFamilies.addSamples(of: place, lacking: lacking, to: &page)

        guard let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter) else { return }
        add(WeatherFamilies.current, of: [snapshot.current], labels: [location], to: &page)
        if let code = snapshot.current.conditionCode {
            let condition = WeatherCondition(code: code, isDay: snapshot.current.isDay ?? true)
            page.add(
                WeatherFamilies.conditionInfo.descriptor(),
                labels: location + [
                    ("code", String(code)), ("condition", condition.text), ("icon", condition.icon),
                ], value: 1)
        }
        let days = snapshot.daily.map { location + [("day", String($0.daysAhead))] }
        add(WeatherFamilies.daily, of: snapshot.daily, labels: days, to: &page)
        let hours = snapshot.hourly.map { location + [("hour", String($0.hoursAhead))] }
        add(WeatherFamilies.hourly, of: snapshot.hourly, labels: hours, to: &page)
    }

    /// One sample per family of each section (a family per unit for temperatures and wind
    /// speeds), none where the provider sent no value; `labels[i]` are `sections[i]`'s. Family by
    /// family, so each is looked up once per place; its samples keep the sections' order.
    private func add<Section>(
        _ families: [WeatherFamily<Section>], of sections: [Section], labels: [[(String, String)]],
        to page: inout MetricFamilies
    ) {
        func add(_ descriptor: MetricDescriptor, _ value: (Section) -> Double?) {
            var position: Int?  // found at the first value: a family with none is not on the page
            for (section, labels) in zip(sections, labels) {
                // No value, or one a conversion took past a Double (1e308 hPa in pascals): no sample.
                guard let value = value(section), value.isFinite else { continue }
                let found = position ?? page.position(of: descriptor)
                position = found
                page.add(at: found, labels: labels, value: value)
            }
        }
        for family in families {
            switch family.measure {
            case .baseUnit:
                add(family.descriptor(), family.value)
            case .perTemperatureUnit:
                for unit in units.temperature {
                    add(family.descriptor(unit.rawValue)) { family.value($0).map(unit.fromCelsius) }
                }
            case .perWindSpeedUnit:
                for unit in units.windSpeed {
                    add(family.descriptor(unit.rawValue)) { family.value($0).map(unit.fromMetersPerSecond) }
                }
            }
        }
    }

    /// Coordinates as the operator would write them (shortest exact decimal).
    static func coordinate(_ value: Double) -> String { SampleValue.format(value) }
}
