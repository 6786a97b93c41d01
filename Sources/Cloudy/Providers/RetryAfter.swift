import Foundation

/// The `Retry-After` header: delta-seconds or an HTTP date. An HTTP date is counted from `now`,
/// which providers take from their injected `ExporterClock` (see `WeatherAPI.refusal`).
public enum RetryAfter {
    public static func seconds(_ header: String, now: Date) -> Double? {
        let text = header.trimmingCharacters(in: .whitespaces)
        // Delta-seconds: digits only, however many (more than 64 bits hold is still a wait, and
        // the longest one honoured is a day, `Backoff.longestRetryAfter`).
        if !text.isEmpty, text.allSatisfy({ ("0"..."9").contains($0) }), let seconds = Double(text) {
            return min(seconds, .greatestFiniteMagnitude)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
