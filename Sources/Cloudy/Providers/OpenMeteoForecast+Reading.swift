/// Open-Meteo's forecast answer read field by field (`JSONReader`): the answer's own fields by a
/// `switch`, each section's by its table (`JSONSection`), in the API's names; fields Cloudy does
/// not use are skipped. A field that is there with the wrong type spoils the place's entry
/// (`OpenMeteoBatches.entries`), as a missing one does not.
extension OpenMeteoForecast: JSONReadable {
    init(json: inout JSONReader) throws {
        var answer = OpenMeteoForecast()
        try json.readObject { key, json in
            switch key {
            case "latitude": answer.latitude = try json.readOptional(Double.self)
            case "longitude": answer.longitude = try json.readOptional(Double.self)
            case "utc_offset_seconds": answer.utc_offset_seconds = try json.readOptional(Int.self)
            case "timezone": answer.timezone = try json.readOptional(String.self)
            case "current_units": answer.current_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "current": answer.current = try json.readOptional(Current.self)
            case "hourly_units": answer.hourly_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "hourly": answer.hourly = try json.readOptional(Hourly.self)
            case "daily_units": answer.daily_units = try json.readOptional(OpenMeteoSectionUnits.self)
            case "daily": answer.daily = try json.readOptional(Daily.self)
            case "error": answer.error = try json.readOptional(Bool.self)
            case "reason": answer.reason = try json.readOptional(String.self)
            default: try json.skipValue()
            }
        }
        self = answer
    }
}

extension OpenMeteoForecast.Current: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, Double?> & Sendable)] = [
        ("time", \.time),
        ("temperature_2m", \.temperature_2m),
        ("apparent_temperature", \.apparent_temperature),
        ("dew_point_2m", \.dew_point_2m),
        ("relative_humidity_2m", \.relative_humidity_2m),
        ("wind_speed_10m", \.wind_speed_10m),
        ("wind_gusts_10m", \.wind_gusts_10m),
        ("wind_direction_10m", \.wind_direction_10m),
        ("pressure_msl", \.pressure_msl),
        ("cloud_cover", \.cloud_cover),
        ("precipitation", \.precipitation),
        ("uv_index", \.uv_index),
        ("visibility", \.visibility),
        ("is_day", \.is_day),
        ("weather_code", \.weather_code),
    ]
}

extension OpenMeteoForecast.Hourly: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, OpenMeteoForecast.Values?> & Sendable)] = [
        ("time", \.time),
        ("temperature_2m", \.temperature_2m),
        ("precipitation_probability", \.precipitation_probability),
        ("precipitation", \.precipitation),
        ("wind_speed_10m", \.wind_speed_10m),
        ("weather_code", \.weather_code),
    ]
}

extension OpenMeteoForecast.Daily: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, OpenMeteoForecast.Values?> & Sendable)] = [
        ("time", \.time),
        ("temperature_2m_max", \.temperature_2m_max),
        ("temperature_2m_min", \.temperature_2m_min),
        ("precipitation_sum", \.precipitation_sum),
        ("precipitation_probability_max", \.precipitation_probability_max),
        ("wind_speed_10m_max", \.wind_speed_10m_max),
        ("wind_gusts_10m_max", \.wind_gusts_10m_max),
        ("uv_index_max", \.uv_index_max),
        ("weather_code", \.weather_code),
        ("sunrise", \.sunrise),
        ("sunset", \.sunset),
    ]
}

extension OpenMeteoSectionUnits: JSONSection {
    static let fields: [(name: StaticString, path: WritableKeyPath<Self, String?> & Sendable)] = [
        ("temperature_2m", \.temperature_2m),
        ("apparent_temperature", \.apparent_temperature),
        ("dew_point_2m", \.dew_point_2m),
        ("temperature_2m_max", \.temperature_2m_max),
        ("temperature_2m_min", \.temperature_2m_min),
        ("wind_speed_10m", \.wind_speed_10m),
        ("wind_gusts_10m", \.wind_gusts_10m),
        ("wind_speed_10m_max", \.wind_speed_10m_max),
        ("wind_gusts_10m_max", \.wind_gusts_10m_max),
        ("precipitation", \.precipitation),
        ("precipitation_sum", \.precipitation_sum),
        ("pressure_msl", \.pressure_msl),
        ("visibility", \.visibility),
    ]
}

extension JSONSection where Field == OpenMeteoForecast.Values {
    /// "hourly.temperature_2m has 23 values where hourly.time has 24": the first series that does
    /// not pair one to one with `time`, so that no value of it can be given its hour or day; nil
    /// when every one does, or when the section has no `time`.
    func misalignment(_ section: String) -> String? {
        let time = Self.fields.first { "\($0.name)" == "time" }
        guard let time, let times = self[keyPath: time.path]?.values.count else { return nil }
        for field in Self.fields {
            guard let count = self[keyPath: field.path]?.values.count, count != times else { continue }
            return "\(section).\(field.name) has \(count) values where \(section).time has \(times)"
        }
        return nil
    }
}
