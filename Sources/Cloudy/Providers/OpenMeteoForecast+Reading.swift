/// Open-Meteo's forecast answer read field by field (`JSONReader`): each `case` is the API's
/// field name; fields Cloudy does not use are skipped. A field that is there with the wrong type
/// spoils the place's entry (`OpenMeteoBatches.entries`), as a missing one does not.
extension OpenMeteoForecast: JSONReadable {
    init(json: inout JSONReader) throws {
        var answer = OpenMeteoForecast()
        try json.readObject { key, json in
            switch key {
            case "latitude": answer.latitude = try json.readOptionalDouble()
            case "longitude": answer.longitude = try json.readOptionalDouble()
            case "utc_offset_seconds": answer.utc_offset_seconds = try json.readOptionalInt()
            case "timezone": answer.timezone = try json.readOptionalString()
            case "current_units": answer.current_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "current": answer.current = try json.readOptional(Current.self)
            case "hourly_units": answer.hourly_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "hourly": answer.hourly = try json.readOptional(Hourly.self)
            case "daily_units": answer.daily_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "daily": answer.daily = try json.readOptional(Daily.self)
            case "error": answer.error = try json.readOptionalBool()
            case "reason": answer.reason = try json.readOptionalString()
            default: try json.skipValue()
            }
        }
        self = answer
    }
}

extension OpenMeteoForecast.Current: JSONReadable {
    init(json: inout JSONReader) throws {
        var current = Self()
        try json.readObject { key, json in
            switch key {
            case "time": current.time = try json.readOptionalDouble()
            case "temperature_2m": current.temperature_2m = try json.readOptionalDouble()
            case "apparent_temperature": current.apparent_temperature = try json.readOptionalDouble()
            case "dew_point_2m": current.dew_point_2m = try json.readOptionalDouble()
            case "relative_humidity_2m": current.relative_humidity_2m = try json.readOptionalDouble()
            case "wind_speed_10m": current.wind_speed_10m = try json.readOptionalDouble()
            case "wind_gusts_10m": current.wind_gusts_10m = try json.readOptionalDouble()
            case "wind_direction_10m": current.wind_direction_10m = try json.readOptionalDouble()
            case "pressure_msl": current.pressure_msl = try json.readOptionalDouble()
            case "cloud_cover": current.cloud_cover = try json.readOptionalDouble()
            case "precipitation": current.precipitation = try json.readOptionalDouble()
            case "uv_index": current.uv_index = try json.readOptionalDouble()
            case "visibility": current.visibility = try json.readOptionalDouble()
            case "is_day": current.is_day = try json.readOptionalDouble()
            case "weather_code": current.weather_code = try json.readOptionalDouble()
            default: try json.skipValue()
            }
        }
        self = current
    }
}

extension OpenMeteoForecast.Hourly: JSONReadable {
    init(json: inout JSONReader) throws {
        typealias Values = OpenMeteoForecast.Values
        var hourly = Self()
        try json.readObject { key, json in
            switch key {
            case "time": hourly.time = try json.readOptional(Values.self)
            case "temperature_2m": hourly.temperature_2m = try json.readOptional(Values.self)
            case "precipitation_probability": hourly.precipitation_probability = try json.readOptional(Values.self)
            case "precipitation": hourly.precipitation = try json.readOptional(Values.self)
            case "wind_speed_10m": hourly.wind_speed_10m = try json.readOptional(Values.self)
            case "weather_code": hourly.weather_code = try json.readOptional(Values.self)
            default: try json.skipValue()
            }
        }
        self = hourly
    }
}

extension OpenMeteoForecast.Daily: JSONReadable {
    init(json: inout JSONReader) throws {
        typealias Values = OpenMeteoForecast.Values
        var daily = Self()
        try json.readObject { key, json in
            switch key {
            case "time": daily.time = try json.readOptional(Values.self)
            case "temperature_2m_max": daily.temperature_2m_max = try json.readOptional(Values.self)
            case "temperature_2m_min": daily.temperature_2m_min = try json.readOptional(Values.self)
            case "precipitation_sum": daily.precipitation_sum = try json.readOptional(Values.self)
            case "precipitation_probability_max":
                daily.precipitation_probability_max = try json.readOptional(Values.self)
            case "wind_speed_10m_max": daily.wind_speed_10m_max = try json.readOptional(Values.self)
            case "wind_gusts_10m_max": daily.wind_gusts_10m_max = try json.readOptional(Values.self)
            case "uv_index_max": daily.uv_index_max = try json.readOptional(Values.self)
            case "weather_code": daily.weather_code = try json.readOptional(Values.self)
            case "sunrise": daily.sunrise = try json.readOptional(Values.self)
            case "sunset": daily.sunset = try json.readOptional(Values.self)
            default: try json.skipValue()
            }
        }
        self = daily
    }
}

extension OpenMeteoSectionUnits: JSONReadable {
    init(json: inout JSONReader) throws {
        var units = Self()
        try json.readObject { key, json in
            switch key {
            case "temperature_2m": units.temperature_2m = try json.readOptionalString()
            case "apparent_temperature": units.apparent_temperature = try json.readOptionalString()
            case "dew_point_2m": units.dew_point_2m = try json.readOptionalString()
            case "temperature_2m_max": units.temperature_2m_max = try json.readOptionalString()
            case "temperature_2m_min": units.temperature_2m_min = try json.readOptionalString()
            case "wind_speed_10m": units.wind_speed_10m = try json.readOptionalString()
            case "wind_gusts_10m": units.wind_gusts_10m = try json.readOptionalString()
            case "wind_speed_10m_max": units.wind_speed_10m_max = try json.readOptionalString()
            case "wind_gusts_10m_max": units.wind_gusts_10m_max = try json.readOptionalString()
            case "precipitation": units.precipitation = try json.readOptionalString()
            case "precipitation_sum": units.precipitation_sum = try json.readOptionalString()
            case "pressure_msl": units.pressure_msl = try json.readOptionalString()
            case "visibility": units.visibility = try json.readOptionalString()
            default: try json.skipValue()
            }
        }
        self = units
    }
}
