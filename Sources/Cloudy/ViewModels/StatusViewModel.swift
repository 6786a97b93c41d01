/// One place as the status page shows it: display strings in the place's units and the
/// configured time notation, like the app's day view model. Given its settings, never reading any.
public struct StatusViewModel {
    public let status: PlaceStatus
    public let units: UnitSettings
    public let now: Double
    public let staleAfter: Double

    public init(status: PlaceStatus, units: UnitSettings, now: Double, staleAfter: Double) {
        self.status = status
        self.units = units
        self.now = now
        self.staleAfter = staleAfter
    }

    public var name: String { status.place.name }

    /// "up", "down" or "waiting" (no attempt yet).
    public var state: String {
        if status.lastAttempt == nil { return "waiting" }
        return status.isUp ? "up" : "down"
    }

    private var snapshot: WeatherSnapshot? { status.freshSnapshot(now: now, staleAfter: staleAfter) }

    /// "24.5 °C", or "24.5 °C / 76.1 °F" with both units; "–" without data.
    public var temperature: String {
        guard let celsius = snapshot?.current.temperatureCelsius else { return "–" }
        return units.temperature.map { Self.number($0.fromCelsius(celsius)) + " " + $0.symbol }.joined(separator: " / ")
    }

    public var wind: String {
        guard let speed = snapshot?.current.windSpeedMetersPerSecond else { return "–" }
        return units.windSpeed.map { Self.number($0.fromMetersPerSecond(speed)) + " " + $0.symbol }.joined(
            separator: " / ")
    }

    public var condition: String {
        guard let code = snapshot?.current.conditionCode else { return "–" }
        return WeatherCondition(code: code, isDay: snapshot?.current.isDay ?? true).text
    }

    /// When the provider measured, in the place's local time and the configured notation.
    public var observedAt: String {
        guard let snapshot, let time = snapshot.current.observedAt else { return "–" }
        return Self.clock(time + Double(snapshot.utcOffsetSeconds), notation: units.time)
    }

    public var problem: String? { status.lastError }

    /// One decimal, as the app showed values.
    static func number(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// "14:05" or "2:05 PM" for seconds since the epoch already shifted to local time.
    static func clock(_ localSeconds: Double, notation: TimeNotation) -> String {
        let minuteOfDay = ((Int(localSeconds.rounded(.down)) / 60) % 1440 + 1440) % 1440
        let hour = minuteOfDay / 60
        let minute = String(minuteOfDay % 60).leftPadded(to: 2)
        switch notation {
        case .h24:
            return "\(String(hour).leftPadded(to: 2)):\(minute)"
        case .h12:
            let twelve = hour % 12 == 0 ? 12 : hour % 12
            return "\(twelve):\(minute) \(hour < 12 ? "AM" : "PM")"
        }
    }
}
