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

    public init(status: PlaceStatus, units: UnitSettings, provider: ProviderName, now: Double, staleAfter: Double) {
        self.status = status
        self.units = units
        self.provider = provider
        self.now = now
        self.staleAfter = staleAfter
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
        AlertThresholdFamilies.addSamples(of: place, to: &page)

        guard let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter) else { return }
        add(WeatherFamilies.current, of: snapshot.current, labels: location, to: &page)
        if let code = snapshot.current.conditionCode {
            let condition = WeatherCondition(code: code, isDay: snapshot.current.isDay ?? true)
            page.add(
                WeatherFamilies.conditionInfo.descriptor(),
                labels: location + [
                    ("code", String(code)), ("condition", condition.text), ("icon", condition.icon),
                ], value: 1)
        }
        for day in snapshot.daily {
            add(WeatherFamilies.daily, of: day, labels: location + [("day", String(day.daysAhead))], to: &page)
        }
        for hour in snapshot.hourly {
            add(WeatherFamilies.hourly, of: hour, labels: location + [("hour", String(hour.hoursAhead))], to: &page)
        }
    }

    /// One sample per family of a section (a family per unit for temperatures and wind speeds),
    /// none where the provider sent no value.
    private func add<Section>(
        _ families: [WeatherFamily<Section>], of section: Section, labels: [(String, String)],
        to page: inout MetricFamilies
    ) {
        for family in families {
            let value = family.value(section)
            switch family.measure {
            case .baseUnit:
                page.add(family.descriptor(), labels: labels, value: value)
            case .perTemperatureUnit:
                for unit in units.temperature {
                    page.add(family.descriptor(unit.rawValue), labels: labels, value: value.map(unit.fromCelsius))
                }
            case .perWindSpeedUnit:
                for unit in units.windSpeed {
                    page.add(
                        family.descriptor(unit.rawValue), labels: labels, value: value.map(unit.fromMetersPerSecond))
                }
            }
        }
    }

    /// Coordinates as the operator would write them (shortest exact decimal).
    static func coordinate(_ value: Double) -> String { SampleValue.format(value) }
}
