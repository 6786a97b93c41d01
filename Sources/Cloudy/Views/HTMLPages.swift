import NIOConcurrencyHelpers
import NIOCore

/// The HTML pages of one rendering: `/` with a card per place, `/places/<name>` with the day and
/// week views of each place, and the page that answers an unknown place. They are rendered from
/// the view models through `PageTemplates` when first asked for, from the state of that rendering
/// (its statuses, readiness and time), and kept until the next rendering replaces them: the same
/// bytes an eager rendering would give, but a refresh no longer pays for pages nobody reads
/// (about 0.55 s of CPU per 1,000 places). `/metrics` stays rendered ahead (`RenderedMetrics`).
public struct HTMLPages: Sendable {
    /// What the pages are rendered from; shared by the copies of this value.
    private let pages: LazyPages
    /// Each place's page, by the place's name.
    public let places: PlacePages

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

    /// `warnings` holds each status's warnings, in the same order (none: no warnings shown).
    public init(
        config: Config, statuses: [PlaceStatus], warnings: [PlaceWarnings] = [], readiness: Readiness,
        telemetryPath: String, now: Double
    ) {
        let masthead = Masthead(
            version: BuildInfo.version, readiness: readiness.notReadyReason.map { "not ready: " + $0 } ?? "ready",
            readinessClass: readiness.notReadyReason == nil ? "ready" : "not-ready", metricsPath: telemetryPath,
            stylesheetPath: Stylesheet.path, faviconPath: WeatherIcons.faviconPath)
        // A config without `air_quality:` shows none, even what an earlier one fetched.
        let statuses = config.airQuality == nil ? statuses.map { $0.withoutAirQuality } : statuses
        let source = PageSource(
            statuses: statuses, warnings: warnings, masthead: masthead, staleAfter: config.refresh.staleAfter,
            hours: config.forecast.hours, now: now)
        pages = LazyPages(source)
        places = PlacePages(source)
    }

    /// `/`, rendered on its first request.
    public var landing: ByteBuffer { pages.landing }

    /// Answered, with 404, for `/places/<name>` when no place has that name.
    public var notFound: ByteBuffer { pages.notFound }

    /// The state one rendering's pages show.
    struct PageSource: Sendable {
        let statuses: [PlaceStatus]
        /// In the order of `statuses`; empty when no warnings are shown.
        let warnings: [PlaceWarnings]
        let masthead: Masthead
        let staleAfter: Double
        let hours: Int
        let now: Double

        func card(_ position: Int) -> StatusViewModel {
            let status = statuses[position]
            var card = StatusViewModel(status: status, units: status.place.units, now: now, staleAfter: staleAfter)
            if position < warnings.count {
                card.warnings = WarningsViewModel(warnings[position], status: status, notation: status.place.units.time)
                card.problems += StatusViewModel.problems(of: warnings[position], now: now)
            }
            return card
        }

        func landing() -> ByteBuffer {
            HTMLPages.buffer(
                PageTemplates.render(
                    LandingContent(
                        title: "Cloudy exporter", masthead: masthead, places: statuses.indices.map(card)),
                    "landing"))
        }

        func notFound() -> ByteBuffer {
            HTMLPages.buffer(
                PageTemplates.render(
                    LandingContent(title: "No such place – Cloudy exporter", masthead: masthead), "not-found"))
        }

        func page(at position: Int) -> ByteBuffer {
            let status = statuses[position]
            let units = status.place.units
            let snapshot = status.freshSnapshot(now: now, staleAfter: staleAfter)
            let air = status.airQuality?.freshReport(now: now, staleAfter: staleAfter)
            let day = snapshot.map { DayViewModel(snapshot: $0, units: units, hours: hours) }
            let week = snapshot.map {
                WeekViewModel(
                    snapshot: $0, airQuality: air?.daily ?? [], units: units, thresholds: status.place.alerts,
                    now: now)
            }
            let content = PlaceContent(
                title: status.place.name + " – Cloudy exporter", masthead: masthead, status: card(position), day: day,
                crossingDays: week.flatMap { $0.crossingDays.isEmpty ? nil : CrossingDays(days: $0.crossingDays) },
                hours: day.flatMap { $0.hours.isEmpty ? nil : HourTable(rows: $0.hours) },
                week: week.flatMap { $0.days.isEmpty ? nil : $0 },
                airQuality: air.map { AirQualityViewModel(report: $0) })
            return HTMLPages.buffer(PageTemplates.render(content, "place"))
        }
    }

    /// `/` and the not-found page, each rendered once, on its first request.
    final class LazyPages: Sendable {
        private let source: PageSource
        private let rendered = NIOLockedValueBox<(landing: ByteBuffer?, notFound: ByteBuffer?)>((nil, nil))

        init(_ source: PageSource) { self.source = source }

        var landing: ByteBuffer {
            if let page = rendered.withLockedValue({ $0.landing }) { return page }
            let page = source.landing()  // outside the lock: a second reader at once renders it twice, harmlessly
            rendered.withLockedValue { $0.landing = page }
            return page
        }

        var notFound: ByteBuffer {
            if let page = rendered.withLockedValue({ $0.notFound }) { return page }
            let page = source.notFound()
            rendered.withLockedValue { $0.notFound = page }
            return page
        }
    }

    fileprivate static func buffer(_ html: String) -> ByteBuffer {
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
        /// The days ahead that cross the place's thresholds, listed in the day view; nil when none does.
        let crossingDays: CrossingDays?
        /// Nil when the forecast holds no hours.
        let hours: HourTable?
        /// Nil when the forecast holds no days.
        let week: WeekViewModel?
        /// Nil when air quality is off or has no fresh report.
        let airQuality: AirQualityViewModel?
    }

    struct HourTable {
        let rows: [DayViewModel.Hour]
    }

    struct CrossingDays {
        let days: [WeekViewModel.Day]
    }
}

/// Each place's page by the place's name, rendered on its first request from the rendering's
/// state. At most `keptPages` pages are kept (a crawler reading every page of 1,000 places would
/// otherwise hold ~20 MB until the next rendering): the ones read most recently, so the pages
/// people keep reading stay rendered whatever else was asked for since; a page read again after
/// it was let go is rendered again.
public final class PlacePages: Sendable {
    static let keptPages = 64

    private let source: HTMLPages.PageSource
    /// Index into `source.statuses` by the place's name.
    private let index: [String: Int]
    private let kept = NIOLockedValueBox(RecentPages())

    /// The kept pages, each stamped with the read that last returned it.
    private struct RecentPages {
        var pages: [String: (page: ByteBuffer, readAt: UInt64)] = [:]
        var reads: UInt64 = 0

        mutating func read(_ name: String) -> ByteBuffer? {
            guard let page = pages[name]?.page else { return nil }
            reads += 1
            pages[name]?.readAt = reads
            return page
        }

        /// Keeps `page`, letting go of the least recently read page when `limit` are kept.
        mutating func keep(_ name: String, _ page: ByteBuffer, limit: Int) {
            reads += 1
            if pages[name] == nil, pages.count >= limit,
                let oldest = pages.min(by: { $0.value.readAt < $1.value.readAt })?.key
            {
                pages[oldest] = nil
            }
            pages[name] = (page, reads)
        }
    }

    init(_ source: HTMLPages.PageSource) {
        self.source = source
        var index: [String: Int] = [:]
        index.reserveCapacity(source.statuses.count)
        for (position, status) in source.statuses.enumerated() { index[status.place.name] = position }
        self.index = index
    }

    /// The page of the place named `name`, or nil when no place has that name.
    public subscript(name: String) -> ByteBuffer? {
        guard let position = index[name] else { return nil }
        if let page = kept.withLockedValue({ $0.read(name) }) { return page }
        let page = source.page(at: position)  // outside the lock, as `LazyPages`
        kept.withLockedValue { $0.keep(name, page, limit: Self.keptPages) }
        return page
    }

    /// The places' names, in config order.
    public var names: [String] { source.statuses.map(\.place.name) }

    /// How many pages are kept now.
    var keptCount: Int { kept.withLockedValue { $0.pages.count } }

    /// The names of the pages kept now, least recently read first.
    var keptNames: [String] {
        kept.withLockedValue { $0.pages.sorted { $0.value.readAt < $1.value.readAt }.map(\.key) }
    }
}
