import XCTest

@testable import Cloudy

/// Thresholds as a person writes them, read into base units exactly; what a forecast day crosses;
/// the series they are exported as; how the pages mark the days that cross them.
final class AlertThresholdsTests: XCTestCase {
    /// The threshold read (nil inside for `off`), or nil when the text is refused.
    func parsed(_ text: String, _ alert: WeatherAlert) -> Double?? {
        guard case .success(let value) = ThresholdValue.parse(text, for: alert) else { return nil }
        return .some(value)
    }

    func testValuesWithTheirUnitsAreReadIntoBaseUnitsExactly() {
        let cases: [(String, WeatherAlert, Double)] = [
            ("3 °C", .frost, 3), ("37.4 °F", .frost, 3), ("3C", .frost, 3), ("98.6 F", .heat, 37),
            ("-40 °F", .frost, -40), ("60 km/h", .wind, 60 / 3.6), ("17 m/s", .wind, 17),
            ("30 kn", .gust, 15.433_333_333),
            ("40 mph", .gust, 17.8816), ("20 mm", .precipitation, 0.02), ("0.8 in", .precipitation, 0.02032),
            ("8", .uv, 8), ("100", .airQuality, 100), ("  5.5 m/s ", .wind, 5.5),
        ]
        for (text, alert, want) in cases {
            guard case .some(.some(let value)) = parsed(text, alert) else {
                XCTFail("\(text) for \(alert) was refused")
                continue
            }
            XCTAssertEqual(value, want, accuracy: 1e-9, "\(text) for \(alert)")
        }
        XCTAssertEqual(parsed("off", .heat), .some(nil), "off is no threshold")
        XCTAssertEqual(parsed("-273.15 °C", .frost), .some(-273.15), "absolute zero itself")
        let zero = try? XCTUnwrap(parsed("-0 m/s", .wind) ?? nil)
        XCTAssertEqual(zero.map { $0.sign }, .plus, "-0 m/s is the 0 it is")
    }

    func testWhatIsNotAThresholdIsRefusedWithItsReason() {
        let cases: [(String, WeatherAlert, ThresholdValue.Problem)] = [
            ("3", .frost, .noUnit(ThresholdValue.example(.temperature))),
            ("20 km/h", .heat, .wrongUnit("km/h", ThresholdValue.example(.temperature))),
            ("3 degC", .frost, .wrongUnit("degC", ThresholdValue.example(.temperature))),
            ("3 K", .frost, .wrongUnit("K", ThresholdValue.example(.temperature))),
            ("20 °C", .wind, .wrongUnit("°C", ThresholdValue.example(.windSpeed))),
            ("-1 m/s", .gust, .negative), ("-0.5 in", .precipitation, .negative), ("-1", .uv, .negative),
            ("8 mm", .uv, .notAThreshold(ThresholdValue.example(.index))),
            ("-300 °C", .frost, .belowAbsoluteZero), ("-500 °F", .frost, .belowAbsoluteZero),
            ("1e1 °C", .frost, .notAThreshold(ThresholdValue.example(.temperature))),
            ("3,5 °C", .heat, .notAThreshold(ThresholdValue.example(.temperature))),
            ("0x10 m/s", .wind, .notAThreshold(ThresholdValue.example(.windSpeed))),
            ("1e1", .uv, .notAThreshold(ThresholdValue.example(.index))),
            ("high", .uv, .notAThreshold(ThresholdValue.example(.index))),
            ("mm", .precipitation, .notAThreshold(ThresholdValue.example(.length))),
            ("", .frost, .notAThreshold(ThresholdValue.example(.temperature))),
        ]
        for (text, alert, problem) in cases {
            XCTAssertEqual(
                ThresholdValue.parse(text, for: alert).map { _ in 0 }, .failure(problem), "\(text) for \(alert)")
        }
    }

    func testFrostIsBelowItsThresholdAndEveryOtherAlertReachesIt() {
        let thresholds = AlertThresholds.builtIn
        func crossed(_ day: DailyForecast) -> [WeatherAlert] { thresholds.crossed(by: day) }
        XCTAssertEqual(crossed(DailyForecast(daysAhead: 0, temperatureMinCelsius: 0)), [], "at 0 °C is not below")
        XCTAssertEqual(crossed(DailyForecast(daysAhead: 0, temperatureMinCelsius: -0.1)), [.frost])
        XCTAssertEqual(
            crossed(
                DailyForecast(
                    daysAhead: 1, temperatureMaxCelsius: 30, precipitationSumMeters: 0.02,
                    windSpeedMaxMetersPerSecond: 17.2, windGustMaxMetersPerSecond: 24.5, uvIndexMax: 8)),
            [.heat, .wind, .gust, .precipitation, .uv], "each at its threshold")
        XCTAssertEqual(
            crossed(
                DailyForecast(
                    daysAhead: 1, temperatureMaxCelsius: 29.9, precipitationSumMeters: 0.0199,
                    windSpeedMaxMetersPerSecond: 17.1, windGustMaxMetersPerSecond: 24.4, uvIndexMax: 7.9)), [])
        var off = thresholds
        off[.frost] = nil
        XCTAssertEqual(off.crossed(by: DailyForecast(daysAhead: 0, temperatureMinCelsius: -20)), [], "off never")
        XCTAssertEqual(crossed(DailyForecast(daysAhead: 0)), [], "no value, nothing crossed")
    }

    /// Thresholds kept to 9 decimals meet forecasts in other units at their exact value: the
    /// pages mark what the rules fire for, no more and no less.
    func testAForecastAtAThresholdWrittenInAnotherUnitIsAtIt() throws {
        func threshold(_ text: String, _ alert: WeatherAlert) throws -> Double {
            guard case .success(let value) = ThresholdValue.parse(text, for: alert) else {
                XCTFail("\(text) was refused")
                return .nan
            }
            return try XCTUnwrap(value)
        }
        let thresholds = AlertThresholds([
            .gust: try threshold("60 km/h", .gust), .wind: try threshold("35 kn", .wind),
            .heat: try threshold("91 °F", .heat), .frost: try threshold("33 °F", .frost),
        ])
        let atEach = DailyForecast(
            daysAhead: 0, temperatureMaxCelsius: (91 - 32) * 5 / 9.0, temperatureMinCelsius: (33 - 32) * 5 / 9.0,
            windSpeedMaxMetersPerSecond: 64.82 / 3.6, windGustMaxMetersPerSecond: 60 / 3.6)
        XCTAssertEqual(thresholds.crossed(by: atEach), [.heat, .wind, .gust], "frost: at it is not below it")
    }

    func testEveryThresholdNotOffIsASeriesInBaseUnitsEvenWithoutWeather() {
        var place = Place(
            name: "Greenhouse", latitude: 59.91, longitude: 10.75, units: UnitSettings(temperature: [.fahrenheit]))
        place.alerts[.frost] = 3
        place.alerts[.heat] = nil
        var page = MetricFamilies()
        MetricsViewModel(
            status: PlaceStatus(place: place), units: place.units, provider: .openMeteo, now: 0, staleAfter: 1
        )
        .addSamples(to: &page)
        var samples: [String: Double] = [:]
        for family in page.families where family.descriptor.name.hasPrefix("weather_alert_threshold") {
            for sample in family.samples {
                XCTAssertEqual(sample.labels.first?.0, "location")
                XCTAssertEqual(sample.labels.first?.1, "Greenhouse")
                samples[family.descriptor.name + "/" + sample.labels[1].1] = sample.value
            }
        }
        XCTAssertEqual(
            samples,
            [
                "weather_alert_threshold_celsius/frost": 3,
                "weather_alert_threshold_meters_per_second/wind": 17.2,
                "weather_alert_threshold_meters_per_second/gust": 24.5,
                "weather_alert_threshold_meters/precipitation": 0.02,
                "weather_alert_threshold/uv": 8,
                "weather_alert_threshold/air_quality": 100,
            ], "°C whatever the place is shown in; heat is off, so it has no series")
    }

    /// An alert the provider gives no daily value for cannot fire: its threshold is no series,
    /// so a dashboard draws no line that nothing can cross.
    func testNoThresholdSeriesForWhatTheProviderCannotFeed() throws {
        func alerts(_ provider: ProviderSettings, airQuality: AirQualitySourceName? = nil) throws -> [String] {
            var config = try ConfigLoader.parse(
                yaml: "locations: [{name: Brooklyn, latitude: 40.65, longitude: -73.95}]\n"
                    + (airQuality == nil ? "" : "air_quality: {}"))
            config.provider = provider
            if let airQuality { config.airQuality?.source = airQuality }
            let page = RenderedPages(
                config: config, statuses: config.places.map { PlaceStatus(place: $0) },
                telemetry: ExporterTelemetry(startedAt: 0).read(), telemetryPath: "/metrics", now: 0,
                processMetrics: { MetricFamilies() })
            let text = String(buffer: page.metrics.prometheus)
            var alerts: [String] = []
            for line in text.split(separator: "\n") where line.hasPrefix("weather_alert_threshold") {
                guard let label = line.firstRange(of: #"alert=""#) else { continue }
                alerts.append(String(line[label.upperBound...].prefix { $0 != "\"" }))
            }
            return alerts.sorted()
        }
        let all = ["frost", "gust", "heat", "precipitation", "uv", "wind"]
        XCTAssertEqual(try alerts(ProviderSettings()), all)
        XCTAssertEqual(try alerts(ProviderSettings(name: .darkSky)), ["frost", "heat", "precipitation", "uv"])
        XCTAssertEqual(try alerts(ProviderSettings(name: .metNorway)), ["frost", "heat", "precipitation", "wind"])
        XCTAssertEqual(try alerts(ProviderSettings(name: .openWeatherMap)), all.filter { $0 != "uv" })
        // The air quality's European index: Open-Meteo's has one, OpenWeatherMap's air pollution none.
        var oneCall = ProviderSettings(name: .openWeatherMap)
        oneCall.oneCall = true
        XCTAssertEqual(try alerts(ProviderSettings(), airQuality: .openMeteo), ["air_quality"] + all)
        XCTAssertEqual(
            try alerts(oneCall, airQuality: .openWeatherMap), all)
    }

    func testConfigCheckNamesWhatDiffersFromTheDefaults() throws {
        let config = try ConfigLoader.parse(
            yaml: """
                alerts: { wind: "60 km/h" }
                locations:
                  - { name: Garden, latitude: 1, longitude: 2 }
                  - { name: Greenhouse, latitude: 1, longitude: 2, alerts: { frost: "37.4 °F", heat: off } }
                """)
        XCTAssertEqual(
            config.alertSummary,
            ["alerts (every place): wind 16.6667 m/s", "alerts of Greenhouse: frost 3 °C, heat off"])
    }

    /// A list where a threshold goes is refused as not being one, not as "not a string".
    func testAListIsNotAThreshold() {
        XCTAssertThrowsError(
            try ConfigLoader.parse(yaml: "alerts: { uv: [1] }\nlocations:\n  - { name: A, latitude: 1, longitude: 2 }")
        ) { error in
            XCTAssertEqual((error as? ConfigError)?.reason, "must be a plain number such as 8 or off, found a list")
        }
    }

    /// Without `air_quality:` there is no index to compare with: no place has an air-quality
    /// threshold, and `--config.check` does not call that a change from the defaults.
    func testAnAirQualityThresholdOnlyWithAirQualityOn() throws {
        let places = """
            alerts: { air_quality: 150 }
            locations:
              - { name: Garden, latitude: 1, longitude: 2 }
            """
        let off = try ConfigLoader.parse(yaml: places)
        XCTAssertNil(off.places[0].alerts[.airQuality])
        XCTAssertEqual(off.alertSummary, [])
        let on = try ConfigLoader.parse(yaml: places + "\nair_quality: {}")
        XCTAssertEqual(on.places[0].alerts[.airQuality], 150)
        XCTAssertEqual(on.alertSummary, ["alerts (every place): air_quality 150"])
        let page = RenderedPages(
            config: off, statuses: off.places.map { PlaceStatus(place: $0) },
            telemetry: ExporterTelemetry(startedAt: 0).read(), telemetryPath: "/metrics", now: 0,
            processMetrics: { MetricFamilies() })
        let text = String(buffer: page.metrics.prometheus)
        XCTAssertTrue(text.contains(#"weather_alert_threshold{location="Garden",alert="uv"} 8"#), text)
        XCTAssertFalse(text.contains(#"alert="air_quality""#))
    }

    /// A place shown in °F with frost at 37.4 °F and heat off: the week marks tomorrow's 2 °C
    /// minimum in °F, not the 45 °C maximum; `/` says which day crosses what.
    func testThePagesMarkTheDaysThatCrossThePlacesThresholdsInItsUnits() {
        var place = Place(
            name: "Greenhouse", latitude: 59.91, longitude: 10.75,
            units: UnitSettings(temperature: [.fahrenheit], windSpeed: [.knots]))
        place.alerts[.frost] = 3
        place.alerts[.heat] = nil
        let midnight = PlaceSnapshots.localMidnight
        let snapshot = WeatherSnapshot(
            current: CurrentConditions(observedAt: PlaceSnapshots.observedAt),
            daily: [
                DailyForecast(daysAhead: 0, date: midnight, temperatureMaxCelsius: 20, temperatureMinCelsius: 10),
                DailyForecast(
                    daysAhead: 1, date: midnight + 86400, temperatureMaxCelsius: 45, temperatureMinCelsius: 2,
                    windGustMaxMetersPerSecond: 30),
                DailyForecast(daysAhead: 2, date: midnight + 2 * 86400, uvIndexMax: 9.2),
            ],
            utcOffsetSeconds: 7200)
        let week = WeekViewModel(
            snapshot: snapshot, units: place.units, thresholds: place.alerts, now: PlaceSnapshots.observedAt)
        XCTAssertEqual(week.days.map(\.marks), ["", "Frost, Storm gusts", "High UV"])
        XCTAssertEqual(week.days.map(\.rowClass), [nil, "crossed", "crossed"])
        XCTAssertEqual(week.crossingDays.map(\.name), ["Tomorrow", "Wednesday"])
        XCTAssertEqual(
            week.days[1].crossings,
            [
                ThresholdCrossing(alert: "frost", title: "Frost", detail: "low 35.6 °F, below 37.4 °F"),
                ThresholdCrossing(alert: "gust", title: "Storm gusts", detail: "gusts 58.3 kn, at or above 47.6 kn"),
            ])
        let status = PlaceStatus(place: place, snapshot: snapshot, lastSuccess: 1, lastAttempt: 1)
        let card = StatusViewModel(status: status, units: place.units, now: 2, staleAfter: 1e10)
        XCTAssertEqual(card.weather?.thresholdsAhead, "Tomorrow: Frost, Storm gusts · Wednesday: High UV")
    }
}

extension AlertThresholdsTests {
    func testALowThatRoundsToItsFrostThresholdIsJustBelowIt() {
        let thresholds = AlertThresholds([.frost: 0, .heat: 30])
        let day = DailyForecast(daysAhead: 1, date: 0, temperatureMaxCelsius: 30.02, temperatureMinCelsius: -0.02)
        let celsius = UnitSettings(temperature: [.celsius], windSpeed: [.metersPerSecond])
        XCTAssertEqual(
            ThresholdCrossing.of(day, thresholds: thresholds, units: celsius).map(\.detail),
            ["low 0.0 °C, just below 0.0 °C", "high 30.0 °C, at or above 30.0 °C"])
        let both = UnitSettings(temperature: [.celsius, .fahrenheit], windSpeed: [.metersPerSecond])
        XCTAssertEqual(
            ThresholdCrossing.of(day, thresholds: thresholds, units: both).first?.detail,
            "low 0.0 °C / 32.0 °F, just below 0.0 °C / 32.0 °F")
        let apartInFahrenheit = DailyForecast(daysAhead: 1, date: 0, temperatureMinCelsius: -0.04)
        XCTAssertEqual(
            ThresholdCrossing.of(apartInFahrenheit, thresholds: thresholds, units: both).first?.detail,
            "low 0.0 °C / 31.9 °F, just below 0.0 °C / 32.0 °F")
        let clearly = DailyForecast(daysAhead: 1, date: 0, temperatureMinCelsius: -0.06)
        XCTAssertEqual(
            ThresholdCrossing.of(clearly, thresholds: thresholds, units: both).first?.detail,
            "low -0.1 °C / 31.9 °F, below 0.0 °C / 32.0 °F")
    }
}
