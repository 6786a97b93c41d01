/// Every family of the air-quality part of the page (the contract's "Air quality and pollen"):
/// the health family, the current indices and concentrations, pollen per plant, and the
/// forecast's hourly indices and daily maxima. Values are in base units (g/m³, grains/m³);
/// the indices are on their own scales.
enum AirQualityFamilies {
    static let up = MetricDescriptor(
        "weather_air_quality_up", .gauge, "1 when the last air-quality ask for this place succeeded, else 0.")

    static let current: [WeatherFamily<AirQualityReport>] =
        [
            // When the values are from: an answer hours old (a stuck mirror or cache) reads as
            // current otherwise, as the source says nothing more.
            .init(
                "weather_air_quality_observation_timestamp_seconds",
                "Unix time of the source's current air-quality values"
            ) { $0.observedAt },
            .init("weather_air_quality_european_index", "European air quality index (EEA; above 100 extremely poor)") {
                $0.indices.european
            },
            .init("weather_air_quality_epa_index", "US air quality index (EPA scale, 0 to 500)") { $0.indices.epa },
        ]
        + Pollutant.allCases.map { pollutant in
            WeatherFamily<AirQualityReport>(
                "weather_air_\(pollutant.rawValue)_grams_per_cubic_meter",
                "\(pollutant.words) concentration near the ground in grams per cubic meter"
            ) { $0.concentrations[pollutant] }
        }

    static let pollen = MetricDescriptor(
        "weather_pollen_grains_per_cubic_meter", .gauge,
        "Pollen concentration of one plant in grains per cubic meter (cached from the last refresh)")

    static let hourly: [WeatherFamily<AirQualityIndices>] = [
        .init(
            "weather_forecast_hourly_air_quality_european_index",
            "Forecast European air quality index; hour is hours ahead, 1 the next whole hour"
        ) { $0.european },
        .init(
            "weather_forecast_hourly_air_quality_epa_index",
            "Forecast US (EPA) air quality index; hour is hours ahead, 1 the next whole hour"
        ) { $0.epa },
    ]

    static let daily: [WeatherFamily<AirQualityIndices>] = [
        .init(
            "weather_forecast_daily_air_quality_european_index_max",
            "Forecast daily maximum European air quality index; day is days ahead, 0 today in the place's time zone"
        ) { $0.european },
        .init(
            "weather_forecast_daily_air_quality_epa_index_max",
            "Forecast daily maximum US (EPA) air quality index; day is days ahead, 0 today in the place's time zone"
        ) { $0.epa },
    ]

    static let dailyPollen = MetricDescriptor(
        "weather_forecast_daily_pollen_grains_per_cubic_meter_max", .gauge,
        "Forecast daily maximum pollen concentration of one plant in grains per cubic meter; day is days ahead, "
            + "0 today in the place's time zone (cached from the last refresh)")
}

extension Pollutant {
    /// How a HELP text or a page names the pollutant.
    var words: String {
        switch self {
        case .pm25: return "PM2.5"
        case .pm10: return "PM10"
        case .ozone: return "Ozone"
        case .nitrogenDioxide: return "Nitrogen dioxide"
        case .sulphurDioxide: return "Sulphur dioxide"
        case .carbonMonoxide: return "Carbon monoxide"
        }
    }
}
