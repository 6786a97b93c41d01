/// Every family of the `weather_*` part of the page. The place's health families and the two
/// with labels of their own (`weather_location_info`, `weather_condition_info`) are written by
/// `MetricsViewModel` itself; the rest are tables, one per section, that it walks.
enum WeatherFamilies {
    static let up = MetricDescriptor("weather_up", .gauge, "1 when the last refresh of this place succeeded, else 0.")
    static let lastSuccess = MetricDescriptor(
        "weather_last_success_timestamp_seconds", .gauge, "Unix time of the last successful refresh of this place.")
    static let lastAttempt = MetricDescriptor(
        "weather_last_attempt_timestamp_seconds", .gauge, "Unix time of the last refresh attempt for this place.")
    static let locationInfo = MetricDescriptor(
        "weather_location_info", .gauge, "Coordinates, time zone and provider of a place; always 1.")
    static let utcOffset = MetricDescriptor(
        "weather_location_utc_offset_seconds", .gauge,
        "Offset of the place's time zone from UTC now, in seconds (for its local times and weekdays).")
    static let conditionInfo = WeatherFamily<CurrentConditions>(
        "weather_condition_info", "Current condition in words and as an icon name; always 1"
    ) { _ in 1 }

    static let current: [WeatherFamily<CurrentConditions>] = [
        .init("weather_temperature", .perTemperatureUnit, "Air temperature at 2 m in {unit}") { $0.temperatureCelsius },
        .init("weather_apparent_temperature", .perTemperatureUnit, "Feels-like temperature in {unit}") {
            $0.apparentTemperatureCelsius
        },
        .init("weather_dew_point", .perTemperatureUnit, "Dew point at 2 m in {unit}") { $0.dewPointCelsius },
        .init("weather_wind_speed", .perWindSpeedUnit, "Wind speed at 10 m in {unit}") { $0.windSpeedMetersPerSecond },
        .init("weather_wind_gust_speed", .perWindSpeedUnit, "Wind gust speed at 10 m in {unit}") {
            $0.windGustMetersPerSecond
        },
        .init("weather_relative_humidity_ratio", "Relative humidity at 2 m, 0 to 1") { $0.relativeHumidityRatio },
        .init("weather_wind_direction_degrees", "Direction the wind comes from, degrees clockwise from north") {
            $0.windDirectionDegrees
        },
        .init("weather_pressure_msl_pascals", "Air pressure reduced to mean sea level in pascals") {
            $0.pressureMslPascals
        },
        .init("weather_cloud_cover_ratio", "Cloud cover, 0 to 1") { $0.cloudCoverRatio },
        .init("weather_precipitation_meters", "Precipitation over the provider's latest interval in meters") {
            $0.precipitationMeters
        },
        .init("weather_uv_index", "UV index") { $0.uvIndex },
        .init("weather_visibility_meters", "Visibility in meters") { $0.visibilityMeters },
        .init("weather_is_day", "1 in daylight, 0 at night") { $0.isDay.map { $0 ? 1 : 0 } },
        .init("weather_condition_code", "Current condition as a WMO weather interpretation code") {
            $0.conditionCode.map(Double.init)
        },
        .init("weather_observation_timestamp_seconds", "Unix time the provider measured the current conditions") {
            $0.observedAt
        },
    ]

    static let daily: [WeatherFamily<DailyForecast>] = [
        .init(
            "weather_forecast_daily_temperature_max", .perTemperatureUnit,
            "Forecast daily maximum temperature in {unit}; day is days ahead, 0 today in the place's time zone"
        ) {
            $0.temperatureMaxCelsius
        },
        .init(
            "weather_forecast_daily_temperature_min", .perTemperatureUnit,
            "Forecast daily minimum temperature in {unit}; day is days ahead, 0 today in the place's time zone"
        ) {
            $0.temperatureMinCelsius
        },
        .init("weather_forecast_daily_wind_speed_max", .perWindSpeedUnit, "Forecast daily maximum wind speed in {unit}")
        {
            $0.windSpeedMaxMetersPerSecond
        },
        .init(
            "weather_forecast_daily_wind_gust_speed_max", .perWindSpeedUnit,
            "Forecast daily maximum wind gust speed in {unit}"
        ) { $0.windGustMaxMetersPerSecond },
        .init("weather_forecast_daily_precipitation_sum_meters", "Forecast daily precipitation sum in meters") {
            $0.precipitationSumMeters
        },
        .init(
            "weather_forecast_daily_precipitation_probability_ratio",
            "Forecast daily maximum precipitation probability, 0 to 1"
        ) { $0.precipitationProbabilityRatio },
        .init("weather_forecast_daily_uv_index_max", "Forecast daily maximum UV index") { $0.uvIndexMax },
        .init("weather_forecast_daily_condition_code", "Forecast daily condition as a WMO weather interpretation code")
        {
            $0.conditionCode.map(Double.init)
        },
        .init("weather_forecast_daily_sunrise_timestamp_seconds", "Unix time of sunrise on that day") { $0.sunrise },
        .init("weather_forecast_daily_sunset_timestamp_seconds", "Unix time of sunset on that day") { $0.sunset },
    ]

    static let hourly: [WeatherFamily<HourlyForecast>] = [
        .init(
            "weather_forecast_hourly_temperature", .perTemperatureUnit,
            "Forecast temperature in {unit}; hour is hours ahead, 1 the next whole hour"
        ) { $0.temperatureCelsius },
        .init("weather_forecast_hourly_wind_speed", .perWindSpeedUnit, "Forecast wind speed in {unit}") {
            $0.windSpeedMetersPerSecond
        },
        .init(
            "weather_forecast_hourly_precipitation_probability_ratio",
            "Forecast probability of precipitation in the hour, 0 to 1"
        ) { $0.precipitationProbabilityRatio },
        .init("weather_forecast_hourly_precipitation_meters", "Forecast precipitation over the hour before in meters") {
            $0.precipitationMeters
        },
        .init("weather_forecast_hourly_condition_code", "Forecast condition as a WMO weather interpretation code") {
            $0.conditionCode.map(Double.init)
        },
    ]
}
