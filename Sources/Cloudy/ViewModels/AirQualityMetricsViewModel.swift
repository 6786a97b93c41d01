/// One place's air-quality samples: `weather_air_quality_up` whenever air quality is on, the
/// rest from the last good report while it is fresh, none where the source sent no value.
struct AirQualityMetricsViewModel {
    let place: Place
    let status: AirQualityStatus
    let now: Double
    let staleAfter: Double

    func addSamples(to page: inout MetricFamilies) {
        let location = [("location", place.name)]
        page.add(AirQualityFamilies.up, labels: location, value: status.isUp ? 1 : 0)
        guard let report = status.freshReport(now: now, staleAfter: staleAfter) else { return }
        add(AirQualityFamilies.current, of: report, labels: location, to: &page)
        addPollen(AirQualityFamilies.pollen, report.pollen, labels: location, to: &page)
        for hour in report.hourly {
            let labels = location + [("hour", String(hour.hoursAhead))]
            add(AirQualityFamilies.hourly, of: hour.indices, labels: labels, to: &page)
        }
        for day in report.daily {
            let labels = location + [("day", String(day.daysAhead))]
            add(AirQualityFamilies.daily, of: day.indicesMax, labels: labels, to: &page)
            addPollen(AirQualityFamilies.dailyPollen, day.pollenMax, labels: labels, to: &page)
        }
    }

    private func add<Section>(
        _ families: [WeatherFamily<Section>], of section: Section, labels: [(String, String)],
        to page: inout MetricFamilies
    ) {
        for family in families { page.add(family.descriptor(), labels: labels, value: family.value(section)) }
    }

    /// One sample per plant with a value; a plant the source sent null for (outside Europe, no
    /// pollen asked) has none.
    private func addPollen(
        _ family: MetricDescriptor, _ pollen: [Plant: Double], labels: [(String, String)],
        to page: inout MetricFamilies
    ) {
        for plant in Plant.allCases {
            page.add(family, labels: labels + [("plant", plant.rawValue)], value: pollen[plant])
        }
    }
}
