import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// What the web-config tests on the server's real pipeline share: a web config file in a
/// directory of its own, a `WebConfigReloader` on a `ManualClock` whose re-reads run when the
/// test says, and an `EmbeddedHTTPConnection` through it. No tests of its own.
class WebConfigTestCase: XCTestCase {
    var directory: URL!
    var webFile: URL!
    let clock = ManualClock()
    let log = RecordedLog()
    static let password = "pässwörd ☂"
    var hash = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        webFile = directory.appendingPathComponent("web.yml")
        hash = try TestCertificates.htpasswdHash(Self.password)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Re-reads of the web config, handed off by `current()`; they run when the test says.
    let rereads = QueuedWork()

    func connection(_ yaml: String, maximumPendingLogins: Int = LoginCheckQueue.defaultMaximumPending) throws
        -> (EmbeddedHTTPConnection, WebConfigReloader)
    {
        try yaml.write(to: webFile, atomically: true, encoding: .utf8)
        let web = try WebConfigReloader(
            path: webFile.path, clock: clock, logger: log.logger, offload: rereads.offload,
            loginChecks: LoginCheckQueue(maximumPending: maximumPendingLogins))
        return (try EmbeddedHTTPConnection(routes: routes(web)), web)
    }

    func routes(_ web: WebConfigReloader) throws -> Routes {
        Routes(
            store: try makeServerTestStore(.ready), telemetryPath: "/metrics", webConfig: web,
            reload: ReloadRecorder().reload)
    }

    /// `cloudy_exporter_web_config_last_reload_successful` as `web` shows it.
    func gauge(_ web: WebConfigReloader) -> Double? {
        web.addMetrics(to: MetricFamilies()).families.first {
            $0.descriptor == WebConfigReloader.lastReloadSuccessful
        }?.samples.first?.value
    }

    /// Writes `yaml` as the web config, lets the next look see it, and runs the re-read it starts.
    func reread(_ web: WebConfigReloader, _ yaml: String) throws {
        try yaml.write(to: webFile, atomically: true, encoding: .utf8)
        clock.advance(by: 1)
        _ = web.current()
        XCTAssertEqual(rereads.run(), 1, "one re-read")
    }

    func basic(_ user: String, _ password: String) -> String {
        basic(Array("\(user):\(password)".utf8))
    }

    func basic(_ bytes: [UInt8]) -> String {
        "Authorization: Basic " + Data(bytes).base64EncodedString()
    }

    var users: String { "basic_auth_users:\n  prometheus: \"\(hash)\"\n" }

    static func base64(_ user: String, _ password: String) -> String {
        Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// Work handed off by the code under test, run when the test says (`run()`), on its thread.
final class QueuedWork: Sendable {
    private let jobs = NIOLockedValueBox<[@Sendable () -> Void]>([])

    var offload: HTTPRequestHandler.Offload {
        { [jobs] job in jobs.withLockedValue { $0.append(job) } }
    }

    var count: Int { jobs.withLockedValue { $0.count } }

    /// Runs what is queued; returns how many ran.
    @discardableResult
    func run() -> Int {
        let work = jobs.withLockedValue { jobs in
            defer { jobs = [] }
            return jobs
        }
        for job in work { job() }
        return work.count
    }
}
