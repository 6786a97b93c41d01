import Foundation

/// The `Retry-After` header: delta-seconds or an HTTP date. An HTTP date is counted from `now`,
/// which providers take from their injected `ExporterClock` (see `WeatherAPI.refusal`).
public enum RetryAfter {
    public static func seconds(_ header: String, now: Date) -> Double? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return Double(seconds) }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
