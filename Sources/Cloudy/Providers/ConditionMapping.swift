/// Other providers' condition vocabularies mapped onto the WMO codes of `WeatherCondition`, so
/// `weather_condition_code` means the same whoever served the place.
enum ConditionMapping {
    /// OpenWeatherMap `weather[].id` (https://openweathermap.org/weather-conditions). Its
    /// thunderstorms (heavy ones too) carry no hail, and WMO's 96 and 99 are "with hail": all are
    /// 95. Sleet and rain-and-snow are freezing rain (66 light, 67 heavy), as MET's sleet is.
    /// Squalls and tornadoes have no code in the vocabulary: none rather than "Fog". Broken
    /// clouds (803, 51–84 %) are partly cloudy, as Open-Meteo names a cover under 80 %; only
    /// overcast (804, 85–100 %) is 3.
    static func wmo(openWeatherMapID id: Int) -> Int? {
        switch id {
        case 200...232: return 95
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
        case 611...613, 615: return 66
        case 616: return 67
        case 620: return 85
        case 621, 622: return 86
        case 701, 711, 721, 731, 741, 751, 761, 762: return 45
        case 800: return 0
        case 801: return 1
        case 802, 803: return 2
        case 804: return 3
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
        // Thunder, heavy or not, says nothing of hail (96, 99).
        if base.hasSuffix("andthunder") { return 95 }
        return nil
    }

    /// Daylight from a MET symbol suffix, when it has one.
    static func isDay(metSymbol symbol: String) -> Bool? {
        if symbol.hasSuffix("_night") { return false }
        if symbol.hasSuffix("_day") || symbol.hasSuffix("_polartwilight") { return true }
        return nil
    }

    /// Dark Sky's `icon` (the default set, Pirate Weather's additions and its `icon=pirate` set)
    /// without its `-day`/`-night` suffix; the `summary` ("Light Rain", "Heavy Snow", "Drizzle",
    /// "Windy and Partly Cloudy") says how heavy rain, snow and sleet are, and what the sky is
    /// like when the icon is only wind. The table is in docs/providers.md.
    static func wmo(darkSkyIcon icon: String, summary: String?) -> Int? {
        var base = icon.lowercased()
        for suffix in ["-day", "-night"] where base.hasSuffix(suffix) { base.removeLast(suffix.count) }
        let words = summary?.lowercased() ?? ""
        let light = words.contains("light") || words.contains("flurries") || base.hasPrefix("possible-")
        let heavy = words.contains("heavy")
        let table: [String: Int] = [
            "clear": 0, "mostly-clear": 1, "partly-cloudy": 2, "mostly-cloudy": 3, "cloudy": 3,
            "fog": 45, "mist": 45, "haze": 45, "smoke": 45,
            "drizzle": 53, "light-rain": 61, "heavy-rain": 65,
            "flurries": 71, "light-snow": 71, "heavy-snow": 75,
            "very-light-sleet": 66, "light-sleet": 66, "heavy-sleet": 67,
            "thunderstorm": 95, "possible-thunderstorm": 95, "hail": 96,
        ]
        switch base {
        // Dark Sky draws "Mostly Clear" with the clear icon and "Mostly Cloudy" with the
        // partly-cloudy one: the summary tells them apart.
        case "clear" where words.contains("mostly clear"): return 1
        case "partly-cloudy" where words.contains("mostly cloudy"): return 3
        case _ where table[base] != nil: return table[base]
        case "rain", "precipitation", "possible-rain", "possible-precipitation":
            if words.contains("drizzle") { return light ? 51 : 53 }
            return light ? 61 : heavy ? 65 : 63
        case "snow", "possible-snow":
            return light ? 71 : heavy ? 75 : 73
        case "sleet", "mixed", "possible-sleet":
            return light ? 66 : 67
        default:
            // Wind, none, or an icon this table does not know: the sky the summary names.
            let skies: [(String, Int)] = [
                ("partly cloudy", 2), ("mostly cloudy", 3), ("overcast", 3), ("cloudy", 3),
                ("mostly clear", 1), ("clear", 0),
            ]
            return skies.first { words.contains($0.0) }?.1
        }
    }

    /// Daylight from a Dark Sky icon suffix, when it has one.
    static func isDay(darkSkyIcon icon: String) -> Bool? {
        if icon.hasSuffix("-night") { return false }
        if icon.hasSuffix("-day") { return true }
        return nil
    }
}
