import Logging

/// What a feed's refresh says in the log about the places that failed.
extension Feed {
    /// One warning per reason: places that failed alike (a batch's 503, an outage) are one line
    /// naming how many and the first few, so an outage of 1,000 places is not 1,000 lines at
    /// each attempt. Said once only: a 400 (a config problem) once per message, and network
    /// failures in a fast retry (the line that armed it said so).
    func logFailures(of indexes: [Int], in run: RefreshRun<Report>) {
        var failures: [(error: WeatherFetchError, places: [String])] = []
        var byMessage: [String: Int] = [:]
        for index in indexes {
            guard case .failure(let error)? = run.outcomes[index] else { continue }
            if error.cause == .network, run.retriesNetwork { continue }
            let name = run.places[index].name
            if let position = byMessage[error.message] {
                failures[position].places.append(name)
            } else {
                byMessage[error.message] = failures.count
                failures.append((error, [name]))
            }
        }
        for (error, places) in failures {
            var metadata = Self.naming(places)
            metadata["reason"] = "\(error.message)"
            metadata["provider"] = "\(source.providerLabel)"
            if error.cause == .badRequest {
                guard loggedBadRequests.insert(error.message).inserted else { continue }
                logger.error(
                    "the provider refuses the request (HTTP 400): a config problem; asked again only at the interval",
                    metadata: metadata)
            } else {
                logger.warning("place refresh failed", metadata: metadata)
            }
        }
    }

    /// `location=Berlin` for one place; `places=150 locations="P000, P001, P002, P003, P005, …"`
    /// for more.
    static func naming(_ places: [String]) -> Logger.Metadata {
        guard places.count > 1 else { return ["location": "\(places.first ?? "")"] }
        let shown = places.prefix(5).joined(separator: ", ") + (places.count > 5 ? ", …" : "")
        return ["places": "\(places.count)", "locations": "\(shown)"]
    }
}
