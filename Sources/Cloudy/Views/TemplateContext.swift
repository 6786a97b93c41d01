import Mustache

/// A value a page template reads names from. swift-mustache finds a name by reflection (`Mirror`)
/// unless the value looks it up itself; reflection made rendering the pages of 1,000 places cost
/// about two seconds of CPU per refresh. Each context lists the names its templates use, with
/// the property each reads; a name it does not list is looked up further out, as with reflection.
protocol TemplateContext: MustacheParent {
    static var templateNames: [String: PartialKeyPath<Self> & Sendable] { get }
}

extension TemplateContext {
    /// An optional property that is nil counts as not there (as with reflection), so a section
    /// `{{#stateDetail}}` is skipped and the name is looked up further out.
    public func child(named name: String) -> Any? {
        guard let path = Self.templateNames[name] else { return nil }
        let value = self[keyPath: path]
        if let optional = value as? any OptionalValue { return optional.wrappedValue }
        return value
    }
}

/// What lets `TemplateContext` see through an `Optional` it only has as `Any`.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? { map { $0 } }
}

extension HTMLPages.Masthead: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "version": \.version, "readiness": \.readiness, "readinessClass": \.readinessClass,
        "metricsPath": \.metricsPath, "stylesheetPath": \.stylesheetPath, "faviconPath": \.faviconPath,
    ]
}

extension HTMLPages.LandingContent: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "title": \.title, "masthead": \.masthead, "places": \.places,
    ]
}

extension HTMLPages.PlaceContent: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "title": \.title, "masthead": \.masthead, "status": \.status, "day": \.day, "hours": \.hours, "week": \.week,
        "crossingDays": \.crossingDays,
        "airQuality": \.airQuality,
    ]
}

extension HTMLPages.HourTable: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["rows": \.rows]
}

extension StatusViewModel: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "name": \.name, "link": \.link, "state": \.state.rawValue, "stateDetail": \.stateDetail, "weather": \.weather,
        "airQuality": \.airQuality, "warnings": \.warnings, "problems": \.problems,
    ]
}

extension StatusViewModel.Weather: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "icon": \.icon, "condition": \.condition, "temperature": \.temperature, "low": \.low, "high": \.high,
        "wind": \.wind, "observedAt": \.observedAt, "thresholdsAhead": \.thresholdsAhead,
    ]
}

extension DayViewModel: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "icon": \.icon, "condition": \.condition, "temperature": \.temperature, "feelsLike": \.feelsLike,
        "readings": \.readings, "hours": \.hours,
    ]
}

extension DayViewModel.Reading: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["label": \.label, "value": \.value]
}

extension DayViewModel.Hour: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "time": \.time, "icon": \.icon, "condition": \.condition, "temperature": \.temperature,
        "precipitationProbability": \.precipitationProbability, "precipitation": \.precipitation, "wind": \.wind,
    ]
}

extension WeekViewModel: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["days": \.days]
}

extension WeekViewModel.Day: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "name": \.name, "icon": \.icon, "condition": \.condition, "low": \.low, "high": \.high,
        "precipitation": \.precipitation, "precipitationProbability": \.precipitationProbability, "wind": \.wind,
        "gusts": \.gusts, "uvIndex": \.uvIndex, "sunrise": \.sunrise, "sunset": \.sunset,
        "crossings": \.crossings, "marks": \.marks, "rowClass": \.rowClass,
    ]
}

extension HTMLPages.CrossingDays: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["days": \.days]
}

extension ThresholdCrossing: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "alert": \.alert, "title": \.title, "detail": \.detail,
    ]
}

extension AirQualityViewModel: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "indices": \.indices, "pollutants": \.pollutants, "pollen": \.pollen, "hasReadings": \.hasReadings,
    ]
}

extension AirQualityViewModel.Index: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "scale": \.scale, "value": \.value, "band": \.band, "bandClass": \.bandClass,
    ]
}

extension AirQualityViewModel.Pollen: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["plants": \.plants]
}

extension AirQualityViewModel.Reading: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = ["label": \.label, "value": \.value]
}
extension WarningsViewModel: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "severity": \.severity, "summary": \.summary, "items": \.items,
    ]
}

extension WarningsViewModel.Item: TemplateContext {
    static let templateNames: [String: PartialKeyPath<Self> & Sendable] = [
        "event": \.event, "severity": \.severity, "headline": \.headline, "onset": \.onset, "expires": \.expires,
        "description": \.description, "instruction": \.instruction, "issuer": \.issuer,
    ]
}
