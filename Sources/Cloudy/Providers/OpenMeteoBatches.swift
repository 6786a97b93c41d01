import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers

/// What Open-Meteo's APIs (the forecast and the air quality) share: many places in one request
/// (comma-separated coordinates; the answer is then a JSON array in request order), at most
/// `placesPerRequest` per request; against the public host requests one after another (the free
/// tier runs one request per client at a time and refuses more than a few in flight), each answer
/// decoded while the next request is on the wire; a self-hosted or commercial host gets up to
/// `parallelRequests` at once (`refresh.parallel_requests`), each answer decoded on the thread
/// that asked; and the API's counting: a place's weight for an answer or a
/// timeout, one call for a request answered with an error.
struct OpenMeteoBatches: Sendable {
    let endpoint: UpstreamEndpoint
    /// Keeps the URL near 3 KB and each answer a few hundred KB, far inside the API's limits.
    let placesPerRequest: Int
    /// The commercial hosts' key, sent as `apikey` to `baseURL` only (redirects are not followed then).
    let apiKey: Secret?
    /// Most requests in flight at once (1 against the free public host).
    var parallelRequests = 1

    /// One outcome per place, in order. `url` builds a batch's request, `weight` is what one
    /// place costs, and `decode` reads a 200 for its batch's places.
    func fetch<Report: Sendable>(
        _ places: [Place], logger: Logger, weight: Double, url: ([Place]) -> String,
        decode: @escaping @Sendable ([UInt8], [Place]) -> [Result<Report, WeatherFetchError>]
    ) -> [Result<Report, WeatherFetchError>] {
        let batches = stride(from: 0, to: places.count, by: placesPerRequest).map {
            Array(places[$0..<min($0 + placesPerRequest, places.count)])
        }
        let answers = NIOLockedValueBox([[Result<Report, WeatherFetchError>]](repeating: [], count: batches.count))
        let decoding = DispatchQueue(label: "cloudy.\(endpoint.name).decode")
        let decoded = DispatchGroup()
        let parallel = parallelRequests > 1
        // Each batch's outcomes, or nil while its answer waits on `decoding`.
        let urls = batches.map(url)
        let ask: @Sendable ((offset: Int, element: [Place])) -> [Result<Report, WeatherFetchError>]? = {
            let (index, batch) = $0
            switch request(urls[index], places: batch.count, weight: weight, logger: logger) {
            case .success(let response) where parallel:
                // Answers arrive together: each is decoded on the thread that asked, side by side.
                return decodeBatch(response, batch, decode)
            case .success(let response):
                decoding.async(group: decoded) {
                    let results = decodeBatch(response, batch, decode)
                    answers.withLockedValue { $0[index] = results }
                }
                return nil
            case .failure(let error):
                return Array(repeating: .failure(error), count: batch.count)
            }
        }
        let outcomes = fetchEach(
            Array(batches.enumerated()), maxInFlight: parallelRequests,
            refusal: { failed in
                // A rate limit covers every request: the batches not sent yet wait too.
                guard case .failure(let error)? = failed?.first, error.isRateLimit else { return nil }
                return error
            },
            skipped: { numbered, error in
                let skipped = error.notAsked(
                    "\(endpoint.name): not asked: the provider asked to wait (\(error.message))")
                return Array(repeating: .failure(skipped), count: numbered.element.count)
            }, ask)
        decoded.wait()
        let decodedAnswers = answers.withLockedValue { $0 }
        return outcomes.indices.flatMap { outcomes[$0] ?? decodedAnswers[$0] }
    }

    /// A 200's outcomes for `batch`, counted: one that decodes for no place at all is a decode failure.
    private func decodeBatch<Report: Sendable>(
        _ response: HTTPResponse, _ batch: [Place],
        _ decode: @Sendable ([UInt8], [Place]) -> [Result<Report, WeatherFetchError>]
    ) -> [Result<Report, WeatherFetchError>] {
        let results = decode(response.body, batch)
        let any = results.contains { if case .success = $0 { return true } else { return false } }
        endpoint.recorder.recordUpstream(provider: endpoint.name, code: any ? "200" : "decode")
        return results.map { $0.mapError(scrubbed) }
    }

    /// One request: a 200 to decode, or the error every place of the batch reports.
    private func request(_ url: String, places: Int, weight: Double, logger: Logger)
        -> Result<HTTPResponse, WeatherFetchError>
    {
        var request = endpoint.request(url)
        request.followRedirects = apiKey == nil
        logger.debug("\(endpoint.name) request", metadata: ["places": "\(places)"])
        let outcome = endpoint.client.fetch(request)
        // With the request's line, when each answer came (bench/refresh draws its timeline from both).
        logger.debug(
            "\(endpoint.name) answer", metadata: ["places": "\(places)", "answer": "\(Self.summary(outcome))"])
        // A 2xx, or no answer (a timeout: the server may have done the work), costs the weight
        // of every place asked; Open-Meteo counts a request it answered with an error as one call.
        // A 2xx other than 200 (a proxy's 204) is read like one, and counts as `decode` when
        // nothing can be read from it.
        var failure: WeatherFetchError
        switch outcome {
        case .success(let response) where (200..<300).contains(response.status):
            endpoint.recordCalls(Double(places) * weight, for: outcome)
            return .success(response)
        case .failure(let error):
            endpoint.recordCalls(Double(places) * weight, for: outcome)
            endpoint.recorder.recordUpstream(provider: endpoint.name, code: error.kind.rawValue)
            failure = .unanswered(endpoint.name, error)
        case .success(let response):
            endpoint.recordCalls(1, for: outcome)
            endpoint.recorder.recordUpstream(provider: endpoint.name, code: String(response.status))
            failure = refusal(response)
            failure.calls = 1 / Double(places)
        }
        return .failure(scrubbed(failure))
    }

    /// An exchange in a few words for the debug log: `200, 5306 bytes`, or why there was no answer.
    static func summary(_ outcome: Result<HTTPResponse, HTTPClientError>) -> String {
        switch outcome {
        case .success(let response): "\(response.status), \(response.body.count) bytes"
        case .failure(let error): error.kind.rawValue
        }
    }

    /// A non-200 answer as its places' error, with the reason from Open-Meteo's error body.
    func refusal(_ response: HTTPResponse) -> WeatherFetchError {
        WeatherAPI.refusal(response, from: endpoint.name, explainedBy: .reason, now: endpoint.clock.now())
    }

    /// An error message with the API key (if any) blanked out.
    func scrubbed(_ error: WeatherFetchError) -> WeatherFetchError {
        guard let apiKey else { return error }
        var scrubbed = error
        scrubbed.message = apiKey.scrub(error.message)
        return scrubbed
    }

    /// The query's places: `latitude=…&longitude=…&timezone=…`, each a comma-separated list in
    /// the places' order (`timezone=auto` when no place names its own).
    static func placesQuery(_ places: [Place]) -> [String] {
        // A zone's `+` (`Etc/GMT+5`) is written `%2B`: in a query a bare `+` reads as a space.
        let zones = places.map { $0.timezone?.replacingOccurrences(of: "+", with: "%2B") ?? "auto" }
        return [
            "latitude=" + places.map { WeatherAPI.coordinate($0.latitude) }.joined(separator: ","),
            "longitude=" + places.map { WeatherAPI.coordinate($0.longitude) }.joined(separator: ","),
            "timezone=" + (Set(zones) == ["auto"] ? "auto" : zones.joined(separator: ",")),
        ]
    }

    /// An answer for `count` places split into its entries: an object for one place, an array in
    /// request order for several. Each entry is read on its own, so a bad one spoils only its
    /// place; text that is not JSON, or an array of the wrong length, fails the whole batch, since
    /// entries can no longer be matched to places. `source` starts every message.
    static func entries<Entry: JSONReadable>(
        _ body: [UInt8], count: Int, as type: Entry.Type, source: String
    ) -> [Result<Entry, WeatherFetchError>] {
        func failAll(_ message: String) -> [Result<Entry, WeatherFetchError>] {
            Array(repeating: .failure(WeatherFetchError("\(source): " + message)), count: count)
        }
        /// One entry, or why it is bad (a value of the wrong type is skipped to the entry's end).
        func entry(_ json: inout JSONReader) throws -> Result<Entry, WeatherFetchError> {
            try json.readOrSkip { try Entry(json: &$0) }.mapError { WeatherFetchError("\(source): bad entry: \($0)") }
        }
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else {
            return failAll("empty answer")
        }
        guard first == UInt8(ascii: "[") || first == UInt8(ascii: "{") else {
            return failAll("answer is not JSON (starts with \(String(UnicodeScalar(first)).debugDescription))")
        }
        let entries: [Result<Entry, WeatherFetchError>]
        do {
            entries = try JSONReader.read(body) { json in
                guard json.peek() == UInt8(ascii: "[") else { return [try entry(&json)] }
                var entries: [Result<Entry, WeatherFetchError>] = []
                entries.reserveCapacity(count)
                try json.readArray { json in entries.append(try entry(&json)) }
                return entries
            }
        } catch {
            return failAll("answer is not valid JSON: \(error)")
        }
        guard entries.count == count else {
            return failAll("answer has \(entries.count) entries for \(count) places")
        }
        return entries
    }
}
