/// Other providers' condition vocabularies mapped onto the WMO codes of `WeatherCondition`, so
/// `weather_condition_code` means the same whoever served the place.
enum ConditionMapping {
    /// OpenWeatherMap `weather[].id` (https://openweathermap.org/weather-conditions).
    static func wmo(openWeatherMapID id: Int) -> Int? {
        switch id {
        case 200...232: return id == 202 || id == 212 || id == 221 || id == 232 ? 99 : 95
        case 300, 310: return 51
        case 301, 311, 313, 321: return 53
        case 302, 312, 314: return 55
        case 500: return 61
        case 501: return 63
        case 502...504: return 65
        case 511: return 66
        case 520: return 80
        case 521, 531: return 81
        case 522: return 82
        case 600: return 71
        case 601: return 73
        case 602: return 75
        case 611...613: return 66
        case 615, 616: return 67
        case 620: return 85
        case 621, 622: return 86
        case 701, 711, 721, 731, 751, 761, 762, 771, 781: return 45
        case 741: return 45
        case 800: return 0
        case 801: return 1
        case 802: return 2
        case 803, 804: return 3
        default: return nil
        }
    }

    /// MET Norway `symbol_code` without its `_day`/`_night`/`_polartwilight` suffix.
    static func wmo(metSymbol symbol: String) -> Int? {
        let base = symbol.split(separator: "_").first.map(String.init) ?? symbol
        let table: [String: Int] = [
            "clearsky": 0, "fair": 1, "partlycloudy": 2, "cloudy": 3, "fog": 45,
            "lightrain": 61, "rain": 63, "heavyrain": 65,
            "lightrainshowers": 80, "rainshowers": 81, "heavyrainshowers": 82,
            "lightsleet": 66, "sleet": 67, "heavysleet": 67,
            "lightsleetshowers": 66, "sleetshowers": 67, "heavysleetshowers": 67,
            "lightsnow": 71, "snow": 73, "heavysnow": 75,
            "lightsnowshowers": 85, "snowshowers": 86, "heavysnowshowers": 86,
        ]
        if let code = table[base] { return code }
        if base.hasSuffix("andthunder") { return base.hasPrefix("heavy") ? 99 : 95 }
        return nil
    }

    /// Daylight from a MET symbol suffix, when it has one.
    static func isDay(metSymbol symbol: String) -> Bool? {
        if symbol.hasSuffix("_night") { return false }
        if symbol.hasSuffix("_day") || symbol.hasSuffix("_polartwilight") { return true }
        return nil
    }
}
