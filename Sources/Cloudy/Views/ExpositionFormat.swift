/// The two text formats `/metrics` speaks.
public enum ExpositionFormat: Sendable {
    /// Prometheus text format 0.0.4.
    case prometheus
    /// OpenMetrics 1.0.0 text.
    case openMetrics

    public var contentType: String {
        switch self {
        case .prometheus: return "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: return "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// Picks the format from an `Accept` header: OpenMetrics only when the client prefers it
    /// (a higher q than text/plain, or listed first at equal q), as Prometheus' negotiation does.
    /// Media types match in any case (RFC 9110), `APPLICATION/OPENMETRICS-TEXT` too.
    public static func negotiate(accept: String?) -> ExpositionFormat {
        guard let accept else { return .prometheus }
        var best: (format: ExpositionFormat, q: Double)? = nil
        for (media, q) in QualityList(accept) where q > 0 {
            let format: ExpositionFormat
            if media.equalsIgnoringCase("application/openmetrics-text") {
                format = .openMetrics
            } else if media.equalsIgnoringCase("text/plain") || media == "*/*" || media.equalsIgnoringCase("text/*") {
                format = .prometheus
            } else {
                continue
            }
            if best == nil || q > best!.q { best = (format, q) }
        }
        return best?.format ?? .prometheus
    }
}

/// How a sample value is written: whole numbers without a fraction, others in the shortest
/// form that reads back to the same Double; Prometheus' spellings for infinities and NaN.
public enum SampleValue {
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return value.description
    }
}
