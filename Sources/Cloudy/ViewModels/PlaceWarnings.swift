/// The official warnings of one place as the page shows them at a moment: the sources it asks,
/// whether its weather answer carries alerts too (OpenWeatherMap's One Call, Dark Sky), and the
/// warnings in force from all of them. The metric families and the HTML pages both read it.
public struct PlaceWarnings: Sendable {
    public let place: String
    /// The `source` labels of the sources the place asks.
    public let sources: [String]
    /// The provider whose weather answer carries alerts for this place and whether its last
    /// refresh succeeded; nil when the answer carries none.
    public let carried: (source: String, isUp: Bool)?
    /// Most severe first, one per id as a label spells it, at most `maxInForce`.
    public let inForce: [WeatherWarning]
    /// How many are in force of each severity, those past `maxInForce` too: the count is what the
    /// sources say, though not each is shown.
    public let countBySeverity: [WarningSeverity: Int]
    /// More than any service lists for one point (a dozen in a hurricane): a longer list is a
    /// source gone wrong, whose every entry would be series, page and CPU at each render.
    public static let maxInForce = 50
    /// Whether any of its sources has a list for it now (answered, and not stale): without one,
    /// how many warnings are in force is not known, which is not 0.
    public let isKnown: Bool
    /// Each of its sources whose last ask failed: why, and when the list still counted was
    /// answered (nil: none counts any more). Alerts carried by the weather answer fail with the
    /// weather, which the card says already.
    public let failures: [(source: String, error: String, keptFrom: Double?)]

    public init(
        status: PlaceStatus, settings: WarningSettings, provider: ProviderName, board: WarningBoard, now: Double,
        staleAfter: Double
    ) {
        place = status.place.name
        sources = settings.sources(for: status.locatedPlace).map(\.name.rawValue)
        var inForce = board.inForce(place: place, sources: sources, now: now, staleAfter: staleAfter)
        var isKnown = board.knows(place: place, sources: sources, now: now, staleAfter: staleAfter)
        failures = sources.compactMap { source in
            board.failure(place: status.place.name, source: source, now: now, staleAfter: staleAfter).map {
                (source, $0.error, $0.keptFrom)
            }
        }
        // Alerts inside the weather answer live and go stale with it, and leave at their expiry.
        if status.snapshot?.warnings != nil {
            carried = (provider.rawValue, status.isUp)
            let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter)
            if snapshot != nil { isKnown = true }
            let fresh = snapshot?.warnings ?? []
            inForce += fresh.filter { warning in warning.expires.map { now < $0 } ?? true }
            inForce.sort(by: WarningBoard.listedBefore)
        } else {
            carried = nil
        }
        // One series per id as the label spells it: ids that differ only in what a label drops
        // (invisible characters, runs of spaces, the cut at 200 characters), or an alert a
        // provider lists twice, are one warning, the first listed (the most severe).
        var seen = Set<[String]>()
        inForce = inForce.filter { seen.insert([$0.source, WarningFamilies.label($0.id)]).inserted }
        self.inForce = Array(inForce.prefix(Self.maxInForce))
        countBySeverity = Dictionary(inForce.map { ($0.severity, 1) }, uniquingKeysWith: +)
        self.isKnown = isKnown
    }
}
