import NIOCore

/// The HTML pages, rendered from the view models through `PageTemplates` once per refresh and
/// reload (never per request): `/` with a card per place, `/places/<name>` with the day and week
/// views of each place, and the page that answers an unknown place.
public struct HTMLPages: Sendable {
    public let landing: ByteBuffer
    /// Each place's page, by the place's name.
    public let places: [String: ByteBuffer]
    /// Answered, with 404, for `/places/<name>` when no place has that name.
    public let notFound: ByteBuffer

    /// What the HTML answers carry besides their type: a policy under which the pages work as
    /// they are (no script, no inline style, nothing from elsewhere).
    public static let headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
                + "frame-ancestors 'none'"
        ),
    ]

    public init(config: Config, statuses: [PlaceStatus], readiness: Readiness, telemetryPath: String, now: Double) {
        let masthead = Masthead(
            version: BuildInfo.version, readiness: readiness.notReadyReason.map { "not ready: " + $0 } ?? "ready",
            readinessClass: readiness.notReadyReason == nil ? "ready" : "not-ready", metricsPath: telemetryPath,
            stylesheetPath: Stylesheet.path, faviconPath: WeatherIcons.faviconPath)
        let staleAfter = config.refresh.staleAfter
        var cards: [StatusViewModel] = []
        var places: [String: ByteBuffer] = [:]
        for status in statuses {
            let units = status.place.units
            let card = StatusViewModel(status: status, units: units, now: now, staleAfter: staleAfter)
            cards.append(card)
            let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter)
            let day = snapshot.map { DayViewModel(snapshot: $0, units: units, hours: config.forecast.hours) }
            let week = snapshot.map { WeekViewModel(snapshot: $0, units: units, now: now) }
            let content = PlaceContent(
                title: status.place.name + " – Cloudy exporter", masthead: masthead, status: card, day: day,
                hours: day.flatMap { $0.hours.isEmpty ? nil : HourTable(rows: $0.hours) },
                week: week.flatMap { $0.days.isEmpty ? nil : $0 })
            places[status.place.name] = Self.buffer(PageTemplates.render(content, "place"))
        }
        self.places = places
        landing = Self.buffer(
            PageTemplates.render(
                LandingContent(title: "Cloudy exporter", masthead: masthead, places: cards), "landing"))
        notFound = Self.buffer(
            PageTemplates.render(
                LandingContent(title: "No such place – Cloudy exporter", masthead: masthead), "not-found"))
    }

    private static func buffer(_ html: String) -> ByteBuffer {
        ByteBufferAllocator().buffer(string: html)
    }

    /// What every page shows on top. Templates read these stored properties by name.
    struct Masthead {
        let version: String
        let readiness: String
        let readinessClass: String
        let metricsPath: String
        let stylesheetPath: String
        let faviconPath: String
    }

    struct LandingContent {
        let title: String
        let masthead: Masthead
        var places: [StatusViewModel] = []
    }

    struct PlaceContent {
        let title: String
        let masthead: Masthead
        let status: StatusViewModel
        /// Nil when there is no weather to show (waiting, or stale).
        let day: DayViewModel?
        /// Nil when the forecast holds no hours.
        let hours: HourTable?
        /// Nil when the forecast holds no days.
        let week: WeekViewModel?
    }

    struct HourTable {
        let rows: [DayViewModel.Hour]
    }
}
