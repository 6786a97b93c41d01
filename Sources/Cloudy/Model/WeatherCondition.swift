/// The WMO weather interpretation code (the `weather_code` of Open-Meteo), with the words and
/// icon the app showed for it. Other providers map their own symbols onto these codes.
public struct WeatherCondition: Sendable, Equatable {
    public var code: Int
    /// Human words, e.g. "Partly cloudy".
    public var text: String
    /// An icon name in the common weather-icon vocabulary, day or night variant where it matters.
    public var icon: String

    public init(code: Int, isDay: Bool = true) {
        self.code = code
        let (text, icon) = WeatherCondition.describe(code)
        self.text = text
        switch icon {
        case "clear", "partly-cloudy":
            self.icon = icon + (isDay ? "-day" : "-night")
        default:
            self.icon = icon
        }
    }

    private static func describe(_ code: Int) -> (String, String) {
        switch code {
        case 0: return ("Clear sky", "clear")
        case 1: return ("Mainly clear", "clear")
        case 2: return ("Partly cloudy", "partly-cloudy")
        case 3: return ("Overcast", "cloudy")
        case 45: return ("Fog", "fog")
        case 48: return ("Depositing rime fog", "fog")
        case 51: return ("Light drizzle", "drizzle")
        case 53: return ("Moderate drizzle", "drizzle")
        case 55: return ("Dense drizzle", "drizzle")
        case 56: return ("Light freezing drizzle", "sleet")
        case 57: return ("Dense freezing drizzle", "sleet")
        case 61: return ("Slight rain", "rain")
        case 63: return ("Moderate rain", "rain")
        case 65: return ("Heavy rain", "rain")
        case 66: return ("Light freezing rain", "sleet")
        case 67: return ("Heavy freezing rain", "sleet")
        case 71: return ("Slight snowfall", "snow")
        case 73: return ("Moderate snowfall", "snow")
        case 75: return ("Heavy snowfall", "snow")
        case 77: return ("Snow grains", "snow")
        case 80: return ("Slight rain showers", "showers")
        case 81: return ("Moderate rain showers", "showers")
        case 82: return ("Violent rain showers", "showers")
        case 85: return ("Slight snow showers", "snow")
        case 86: return ("Heavy snow showers", "snow")
        case 95: return ("Thunderstorm", "thunderstorm")
        case 96: return ("Thunderstorm with slight hail", "thunderstorm")
        case 99: return ("Thunderstorm with heavy hail", "thunderstorm")
        default: return ("Unknown", "unknown")
        }
    }
}
