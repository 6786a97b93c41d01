/// A POSIX TZ rule as a TZif footer writes it (RFC 8536 section 3.3), such as
/// `CET-1CEST,M3.5.0,M10.5.0/3` or `<-03>3`: a standard offset, and optionally a daylight
/// offset with the yearly moments it starts and ends. Offsets here are seconds east of UTC
/// (POSIX writes them west, hence `CET-1` for UTC+1).
struct POSIXZoneRule: Sendable, Equatable {
    /// A day of the year as the rule names it.
    enum Day: Sendable, Equatable {
        /// `Jn`: 1–365, February 29 never counted.
        case noLeapDay(Int)
        /// `n`: 0–365, February 29 counted.
        case dayOfYear(Int)
        /// `Mm.w.d`: weekday `d` (0 Sunday) of week `w` (5: the last) of month `m`.
        case weekday(month: Int, week: Int, weekday: Int)
    }

    /// A yearly moment: a day and the local time on it, in seconds (may be negative or past
    /// 24 hours, RFC 8536's extension).
    struct Moment: Sendable, Equatable {
        var day: Day
        var time: Int
    }

    struct Daylight: Sendable, Equatable {
        var offset: Int
        /// Written in standard time.
        var start: Moment
        /// Written in daylight time.
        var end: Moment
    }

    var standard: Int
    var daylight: Daylight?

    /// Seconds east of UTC at `time` (seconds since the epoch).
    func utcOffset(at time: Int64) -> Int {
        guard let daylight else { return standard }
        let seconds = Int(time)
        let year = HTTPDate.civilFromDays(Self.floorDivide(seconds + standard, 86400)).year
        let start = daylight.start.seconds(in: year) - standard
        let end = daylight.end.seconds(in: year) - daylight.offset
        let inDaylight = start < end ? (start <= seconds && seconds < end) : !(end <= seconds && seconds < start)
        return inDaylight ? daylight.offset : standard
    }

    /// Parses a footer; nil for text that is not one (empty text included).
    init?(_ text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard scanner.name(), let standardWest = scanner.offset() else { return nil }
        standard = -standardWest
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard scanner.name() else { return nil }
        let daylightOffset = scanner.startsOffset ? scanner.offset().map { -$0 } : standard + 3600
        guard let daylightOffset, scanner.take(","), let start = scanner.moment(), scanner.take(","),
            let end = scanner.moment(), scanner.atEnd
        else { return nil }
        daylight = Daylight(offset: daylightOffset, start: start, end: end)
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    /// Reads a rule's parts from its bytes, left to right.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }
        var next: UInt8? { position < bytes.count ? bytes[position] : nil }
        var startsOffset: Bool {
            next.map { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || isDigit($0) } ?? false
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard next == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        /// A zone abbreviation: three or more letters, or anything but `>` within `<…>`.
        mutating func name() -> Bool {
            let start = position
            if take("<") {
                while let byte = next, byte != UInt8(ascii: ">") { position += 1 }
                return position - start > 1 && take(">")
            }
            while let byte = next, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") {
                position += 1
            }
            return position - start >= 3
        }

        mutating func number(maximum: Int) -> Int? {
            var value = 0
            var digits = 0
            while let byte = next, isDigit(byte) {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                position += 1
                guard value <= maximum else { return nil }
            }
            return digits > 0 ? value : nil
        }

        /// `[+|-]hh[:mm[:ss]]` in seconds; hours up to 167 (RFC 8536's extension of POSIX's 24).
        mutating func offset() -> Int? {
            let sign = take("-") ? -1 : 1
            if sign == 1 { _ = take("+") }
            guard let hours = number(maximum: 167) else { return nil }
            var seconds = hours * 3600
            for unit in [60, 1] {
                guard take(":") else { break }
                guard let part = number(maximum: 59) else { return nil }
                seconds += part * unit
            }
            return sign * seconds
        }

        /// `date[/time]`; the time is 02:00 when not written.
        mutating func moment() -> Moment? {
            let day: Day
            if take("J") {
                guard let number = number(maximum: 365), number >= 1 else { return nil }
                day = .noLeapDay(number)
            } else if take("M") {
                guard let month = number(maximum: 12), month >= 1, take("."), let week = number(maximum: 5),
                    week >= 1, take("."), let weekday = number(maximum: 6)
                else { return nil }
                day = .weekday(month: month, week: week, weekday: weekday)
            } else {
                guard let number = number(maximum: 365) else { return nil }
                day = .dayOfYear(number)
            }
            guard take("/") else { return Moment(day: day, time: 7200) }
            return offset().map { Moment(day: day, time: $0) }
        }
    }
}

extension POSIXZoneRule.Moment {
    /// This moment in `year` as seconds since the epoch, on a clock at UTC (the caller takes the
    /// offset it is written in away).
    func seconds(in year: Int) -> Int {
        let days: Int
        switch day {
        case .noLeapDay(let number):
            days =
                HTTPDate.daysFromCivil(year: year, month: 1, day: 1) + number - 1
                + (POSIXZoneRule.isLeap(year) && number >= 60 ? 1 : 0)
        case .dayOfYear(let number):
            days = HTTPDate.daysFromCivil(year: year, month: 1, day: 1) + number
        case .weekday(let month, let week, let weekday):
            let first = HTTPDate.daysFromCivil(year: year, month: month, day: 1)
            let firstWeekday = (first % 7 + 11) % 7  // 1970-01-01 was a Thursday (4)
            var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let next =
                month == 12
                ? HTTPDate.daysFromCivil(year: year + 1, month: 1, day: 1)
                : HTTPDate.daysFromCivil(year: year, month: month + 1, day: 1)
            while day >= next { day -= 7 }
            days = day
        }
        return days * 86400 + time
    }
}
