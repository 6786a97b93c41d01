/// An official warning in force for a place, as a national weather service issued it in the
/// Common Alerting Protocol (CAP), or as a weather provider's answer carries it. Times are unix
/// seconds; texts are as the source sent them (the views make them fit a label or a page).
public struct WeatherWarning: Sendable, Equatable {
    /// Stable across updates of the same warning where the source says so (an update replaces
    /// the warning of the same `id`); unique within one source and place.
    public var id: String
    /// The `source` label: `nws`, `met-norway`, `dwd`, `openweathermap` or `dark-sky`.
    public var source: String
    /// What it warns of ("Tornado Warning", "Wind", "STURMBÖEN").
    public var event: String
    public var severity: WarningSeverity
    /// CAP's urgency in lowercase (`immediate`, `expected`, `future`, `past`, `unknown`).
    public var urgency: String
    /// CAP's certainty in lowercase (`observed`, `likely`, `possible`, `unlikely`, `unknown`).
    public var certainty: String
    public var headline: String
    public var description: String
    public var instruction: String
    /// Who issued it ("NWS Seattle WA", "MET Norway", "DWD").
    public var sender: String
    public var onset: Double?
    /// Nil when open-ended.
    public var expires: Double?

    /// A CAP word as Cloudy compares it: lowercase, without spaces or line breaks around it
    /// ("Severe\n" from a source is `severe`).
    static func capWord(_ word: String) -> String {
        let start = word.drop(while: \.isWhitespace)
        let end = start.lastIndex { !$0.isWhitespace }.map { start.index(after: $0) } ?? start.startIndex
        return start[..<end].lowercased()
    }

    /// CAP's words for urgency and certainty; the init makes any other `unknown`.
    static let urgencies: Set = ["immediate", "expected", "future", "past", "unknown"]
    static let certainties: Set = ["observed", "likely", "possible", "unlikely", "unknown"]

    public init(
        id: String, source: String, event: String, severity: WarningSeverity, urgency: String = "unknown",
        certainty: String = "unknown", headline: String = "", description: String = "", instruction: String = "",
        sender: String = "", onset: Double? = nil, expires: Double? = nil
    ) {
        self.id = id
        self.source = source
        self.event = event
        self.severity = severity
        // Any case the source writes; a word CAP does not have ("soon", "sure") is `unknown`.
        let (urgency, certainty) = (Self.capWord(urgency), Self.capWord(certainty))
        self.urgency = Self.urgencies.contains(urgency) ? urgency : "unknown"
        self.certainty = Self.certainties.contains(certainty) ? certainty : "unknown"
        self.headline = headline
        self.description = description
        self.instruction = instruction
        self.sender = sender
        self.onset = onset
        self.expires = expires
    }
}

/// CAP's severity words, the `severity` label of every warning series whatever the source's own
/// scale (MET Norway's and DWD's levels are mapped onto these by their own `severity` fields).
public enum WarningSeverity: String, Sendable, CaseIterable, Comparable {
    case extreme, severe, moderate, minor, unknown

    /// Most severe first.
    private var rank: Int { Self.allCases.firstIndex(of: self) ?? Self.allCases.count }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank > rhs.rank }

    /// CAP's word in any case ("Severe", "SEVERE", " severe\n"); anything else is `unknown`.
    public init(cap word: String) {
        self = Self(rawValue: WeatherWarning.capWord(word)) ?? .unknown
    }
}
