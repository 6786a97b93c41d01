/// One place as `/` shows it, like the app's list of saved places: its state, condition,
/// temperature, today's low and high and wind, as display strings in the place's units and the
/// configured time notation. Given its settings, never reading any; every value is worked out
/// once, when the page is rendered.
public struct StatusViewModel: Sendable {
    public enum State: String, Sendable {
        /// The last refresh succeeded.
        case up
        /// The last refresh failed; the weather still shown is younger than `stale_after`.
        case down
        /// The last good weather is older than `stale_after` and no longer shown.
        case stale
        /// No refresh has been tried yet.
        case waiting
    }

    public let name: String
    /// The place's page, relative to the server's root: `/places/` and the name percent-encoded.
    public let link: String
    public let state: State
    /// What the state means for this place: why the last refresh failed, how old the last good
    /// data is; nil when up.
    public let stateDetail: String?
    /// The current weather, or nil when there is none to show (waiting, stale, or none sent).
    public let weather: Weather?
    /// The European air quality index at a glance, when air quality is on and fresh.
    public let airQuality: AirQualityViewModel.Index?
    /// The warnings in force, when there are any (set by the page that shows them).
    public var warnings: WarningsViewModel?
    /// The sources beside the weather whose last ask failed (`PlaceStatus.sourcesBeside`, an
    /// official warning service), each on a line of its own: "Air quality: the last refresh
    /// failed (…); the values shown are from its answer of 12 min ago". Empty when none fails.
    public var problems: [String] = []

    /// What the card shows of the current weather.
    public struct Weather: Sendable, Equatable {
        /// The icon's name (`WeatherCondition.icon`), "unknown" without a condition.
        public let icon: String
        public let condition: String
        public let temperature: String
        /// Today's low and high: "12.1 °C / 19.8 °C", each in every temperature unit configured.
        public let low: String
        public let high: String
        /// "NW 3.2 m/s": where the wind comes from, and its speed.
        public let wind: String
        /// When the provider measured, the place's local time in the configured notation.
        public let observedAt: String
        /// The forecast days that cross the place's alert thresholds, at a glance:
        /// "Tomorrow: Frost · Friday: Heat, Storm gusts"; nil when none does.
        public let thresholdsAhead: String?
    }

    public init(status: PlaceStatus, units: UnitSettings, now: Double, staleAfter: Double) {
        name = status.place.name
        link = Self.link(to: status.place.name)
        let fresh = status.freshSnapshot(now: now, staleAfter: staleAfter)
        // The provider's quiet period, when one is in force, is said once on every card.
        let quiet = status.quietPeriod
        if status.lastAttempt == nil {
            state = .waiting
            stateDetail = Readiness.waiting(status)
        } else if status.snapshot != nil, fresh == nil, let lastSuccess = status.lastSuccess {
            state = .stale
            stateDetail =
                "last good data \(ValueFormat.age(now - lastSuccess)) old"
                + (status.lastError.map { "; last refresh failed: " + Readiness.withQuietPeriod($0.onOneLine, quiet) }
                    ?? quiet.map { "; " + $0.description } ?? "")
        } else if status.isUp {
            state = .up
            stateDetail = quiet?.description
        } else {
            state = .down
            stateDetail = Readiness.withQuietPeriod(status.lastError?.onOneLine ?? "unknown error", quiet)
        }
        let freshAir = status.airQuality?.freshReport(now: now, staleAfter: staleAfter)
        weather = fresh.map {
            Self.weather(of: $0, air: freshAir?.daily ?? [], units: units, thresholds: status.place.alerts, now: now)
        }
        airQuality = AirQualityViewModel.european(freshAir?.indices.european)
        problems = status.sourcesBeside.compactMap { name, outcome in
            guard let error = outcome.lastError else { return nil }
            let kept = outcome.hasFreshReport(now: now, staleAfter: staleAfter) ? outcome.lastSuccess : nil
            return Self.problem(
                name, error: error, kept: kept.map { ("values", now - $0) }, otherwise: "no values to show")
        }
    }

    /// The line for a source whose last ask failed: what, why, and how old what the page still
    /// shows of it is (`kept`: what it is and its age), or what that leaves (`otherwise`).
    static func problem(_ source: String, error: String, kept: (what: String, age: Double)?, otherwise: String)
        -> String
    {
        "\(source): the last refresh failed (\(error.onOneLine)); "
            + (kept.map { "the \($0.what) shown are from its answer of \(ValueFormat.age($0.age)) ago" } ?? otherwise)
    }

    /// The lines for the warning sources of `warnings` whose last ask failed.
    static func problems(of warnings: PlaceWarnings, now: Double) -> [String] {
        warnings.failures.map { failure in
            problem(
                "Warnings from \(failure.source)", error: failure.error,
                kept: failure.keptFrom.map { ("warnings", now - $0) },
                otherwise: "whether any are in force is not known")
        }
    }

    private static func weather(
        of snapshot: WeatherSnapshot, air: [DailyAirQuality], units: UnitSettings, thresholds: AlertThresholds,
        now: Double
    )
        -> Weather
    {
        let current = snapshot.current
        let condition = current.conditionCode.map { WeatherCondition(code: $0, isDay: current.isDay ?? true) }
        let today = snapshot.daily.first { $0.daysAhead == 0 }
        let speed = ValueFormat.windSpeed(current.windSpeedMetersPerSecond, units.windSpeed)
        let direction =
            ValueFormat.windDirection(current.windDirectionDegrees, speed: current.windSpeedMetersPerSecond)
            .map { $0 + " " } ?? ""
        return Weather(
            icon: condition?.icon ?? "unknown",
            condition: condition?.text ?? ValueFormat.missing,
            temperature: ValueFormat.temperature(current.temperatureCelsius, units.temperature),
            low: ValueFormat.temperature(today?.temperatureMinCelsius, units.temperature),
            high: ValueFormat.temperature(today?.temperatureMaxCelsius, units.temperature),
            wind: current.windSpeedMetersPerSecond == nil ? ValueFormat.missing : direction + speed,
            observedAt: ValueFormat.clock(current.observedAt, offsets: snapshot.utcOffsets, units.time),
            thresholdsAhead: thresholdsAhead(snapshot, air: air, thresholds: thresholds, now: now))
    }

    /// "Tomorrow: Frost · Friday: Heat, Air pollution": the week's marks, without details.
    private static func thresholdsAhead(
        _ snapshot: WeatherSnapshot, air: [DailyAirQuality], thresholds: AlertThresholds, now: Double
    ) -> String? {
        let today = WeekViewModel.localToday(snapshot, now: now)
        let days = snapshot.daily.compactMap { day -> String? in
            let air = WeekViewModel.airQuality(on: day, today: today, in: air)
            let crossed = ThresholdCrossing.alerts(crossedBy: day, air: air, thresholds: thresholds)
            guard !crossed.isEmpty else { return nil }
            return ValueFormat.dayName(today + day.daysAhead, today: today) + ": "
                + crossed.map(ThresholdCrossing.title).joined(separator: ", ")
        }
        return days.isEmpty ? nil : days.joined(separator: " · ")
    }

    /// `/places/` and the name with every byte outside the unreserved set of RFC 3986
    /// percent-encoded, so any name (slashes, spaces, quotes, emoji) is one path segment.
    public static func link(to name: String) -> String {
        "/places/" + percentEncoded(name)
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// The name a path segment encodes (`percentEncoded` undone), or nil when it is not valid
    /// percent-encoded UTF-8.
    public static func percentDecoded(_ segment: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = segment.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexDigit), let low = utf8.next().flatMap(hexDigit) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
