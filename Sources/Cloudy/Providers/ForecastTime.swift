import Foundation

/// Where a forecast step falls as the exporter counts it: hours ahead of the current whole hour,
/// local calendar days. Times come from untrusted answers, so every result is optional.
enum ForecastTime {
    /// The offset from UTC at a moment, by the rules of the IANA zone `zone` (so a
    /// daylight-saving change inside a forecast moves its clock times), else always `fixed`.
    static func utcOffsets(zone: String?, fixed: Int) -> @Sendable (Double) -> Int {
        guard let zone, let rules = ZoneRules.named(zone) else { return { _ in fixed } }
        return { seconds in abs(seconds) < 1e12 ? rules.utcOffset(at: seconds) : fixed }
    }

    /// `offsets` for moments from `first` to `last` (the earliest and latest asked), asked once
    /// when the offset is the same at both ends (no daylight-saving change between them, as in
    /// most weeks; no zone changes twice within one): a week of hourly steps for 1,000 places is
    /// 168,000 look-ups otherwise.
    static func steady(_ offsets: @escaping (Double) -> Int, from first: Double?, to last: Double?) -> (Double) -> Int {
        guard let first, let last else { return offsets }
        let offset = offsets(first)
        return offsets(last) == offset ? { _ in offset } : offsets
    }

    /// `value` rounded down, or nil when it is not a number a clock or calendar could hold
    /// (answers are untrusted: `Int(1e300)` would trap).
    static func wholeNumber(_ value: Double) -> Int? {
        guard value.isFinite, abs(value) < 1e12 else { return nil }
        return Int(value.rounded(.down))
    }

    /// Hours ahead of `time` counted from the whole hour of `now` (1 = the next whole hour). The
    /// hour is whole at `offset` seconds from UTC: the local hour for a series stepping on local
    /// hours (Open-Meteo's, whose steps in Kathmandu, UTC+5:45, fall at :15 past UTC hours).
    static func hoursAhead(_ time: Double, now: Double, offset: Int = 0) -> Int? {
        let local = Double(offset)
        return wholeNumber((time - (((now + local) / 3600).rounded(.down) * 3600 - local)) / 3600)
    }

    /// The local calendar day (days since 1970-01-01) of `time` at `offset` seconds from UTC.
    static func localDay(_ time: Double, offset: Int) -> Int? {
        wholeNumber((time + Double(offset)) / 86400)
    }
}
