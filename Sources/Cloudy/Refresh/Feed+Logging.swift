import Logging

/// What a feed's refresh says in the log about the places that failed.
extension Feed {
    /// One warning per failed place, except what is said once: a 400 (a config problem) once
    /// per message, and network failures in a fast retry (the line that armed it said so).
    func logFailures(of indexes: [Int], in run: RefreshRun<Report>) {
        for index in indexes {
            guard case .failure(let error)? = run.outcomes[index] else { continue }
            let name = run.places[index].name
            switch error.cause {
            case .badRequest:
                guard loggedBadRequests.insert(error.message).inserted else { continue }
                logger.error(
                    "the provider refuses the request (HTTP 400): a config problem; asked again only at the interval",
                    metadata: ["location": "\(name)", "reason": "\(error.message)"])
            case .network where run.retriesNetwork:
                continue
            default:
                logger.warning(
                    "place refresh failed",
                    metadata: [
                        "location": "\(name)", "provider": "\(source.providerLabel)", "reason": "\(error.message)",
                    ])
            }
        }
    }
}
