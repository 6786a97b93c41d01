import ArgumentParser
import Cloudy
import Dispatch
import Foundation
import Logging

/// The entry point. Synchronous on purpose: the main thread waits for the command to finish. An
/// `async` main would hand the main thread to Dispatch instead (`dispatch_main()`), which ends it
/// with `pthread_exit`: a forced unwind of its stack that reads the unwind tables and keeps them
/// resident for nothing (how much: bench/README.md, "Memory").
@main
enum Main {
    static func main() {
        let finished = DispatchSemaphore(value: 0)
        // Detached: `main()` is isolated to the main actor, whose thread waits below.
        Task.detached {
            await CloudyExporter.main()  // exits the process itself on a bad flag or a failure
            finished.signal()
        }
        finished.wait()
    }
}

/// `cloudy_exporter`: parses the flags (exporter-toolkit names) and runs the application.
struct CloudyExporter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudy_exporter",
        abstract: "Prometheus exporter for weather: current conditions and forecasts per place."
    )

    @Option(name: .customLong("config.file"), help: "Cloudy YAML config file (default: the embedded config).")
    var configFile: String?

    @Flag(name: .customLong("config.check"), help: "Validate the config, print what is wrong, exit 0 or 1.")
    var configCheck = false

    @Option(name: .customLong("web.listen-address"), help: "HOST:PORT to listen on; repeatable (default :10150).")
    var listenAddresses: [String] = []

    @Option(
        name: .customLong("web.config.file"),
        help: "Web config (exporter-toolkit format): TLS, basic auth, rate limit. See docs/web-config.md.")
    var webConfigFile: String?

    @Option(name: .customLong("web.telemetry-path"), help: "Path of the metrics page.")
    var telemetryPath = "/metrics"

    @Option(
        name: .customLong("web.max-connections"),
        help:
            "Most client connections open at once; one over it is closed at once (lowered to fit the open-file limit)."
    )
    var maxConnections = ConnectionLimit.defaultMaximum

    @Option(name: .customLong("log.level"), help: "debug, info, warn or error.")
    var logLevel = "info"

    @Option(name: .customLong("log.format"), help: "logfmt or json.")
    var logFormat = "logfmt"

    @Option(name: .customLong("storage.path"), help: "Directory for small state that must survive a restart.")
    var storagePath = "./data"

    @Option(
        name: .customLong("shard"), help: "INDEX/COUNT: own only the places whose stable name hash falls in this shard."
    )
    var shard: String?

    @Flag(name: .customLong("version"), help: "Print version, revision and Swift version.")
    var version = false

    func validate() throws {
        if let problem = Routes.telemetryPathProblem(telemetryPath) {
            throw ValidationError("--web.telemetry-path \(problem)")
        }
        guard Self.level(logLevel) != nil else {
            throw ValidationError("--log.level must be debug, info, warn or error")
        }
        guard LogFormat(rawValue: logFormat) != nil else {
            throw ValidationError("--log.format must be logfmt or json")
        }
        if let shard, Shard(shard) == nil {
            throw ValidationError("--shard \"\(shard)\" is not INDEX/COUNT with 0 <= INDEX < COUNT <= 10000")
        }
        guard maxConnections > 0 else {
            throw ValidationError("--web.max-connections must be a positive number")
        }
        for address in listenAddresses where ListenAddress(address) == nil {
            throw ValidationError("--web.listen-address \"\(address)\" is not HOST:PORT")
        }
    }

    static func level(_ text: String) -> Logger.Level? {
        switch text {
        case "debug": return .debug
        case "info": return .info
        case "warn", "warning": return .warning
        case "error": return .error
        default: return nil
        }
    }

    func run() async throws {
        if version {
            print("cloudy_exporter, version \(BuildInfo.version) (revision: \(BuildInfo.revision))")
            print("  swift version: \(BuildInfo.swiftVersion)")
            return
        }
        var options = ExporterOptions(
            configFile: configFile,
            listenAddresses: listenAddresses.isEmpty
                ? [ListenAddress(host: nil, port: 10150)] : listenAddresses.compactMap(ListenAddress.init),
            telemetryPath: telemetryPath,
            logLevel: Self.level(logLevel) ?? .info,
            logFormat: LogFormat(rawValue: logFormat) ?? .logfmt,
            storagePath: storagePath,
            shard: shard.flatMap(Shard.init),
            webConfigFile: webConfigFile
        )
        options.maxConnections = maxConnections
        if configCheck {
            do {
                let file = configFile ?? DefaultConfig.fileName
                let config = try options.loadConfig()
                // The plan before anything is sent; `refresh.over_quota: refuse` fails the check here.
                let silent = Logger(label: "config-check") { _ in SwiftLogNoOpLogHandler() }
                var warnOnly = config
                warnOnly.refresh.overQuota = .warn
                let floored = try FairUse.clampInterval(warnOnly, file: file, logger: silent)
                let web = try webConfigFile.map { path throws(ConfigError) in try WebConfigLoader.load(file: path) }
                let inUse = try FairUse.clampInterval(config, file: file, logger: silent)
                let places = config.places.count == 1 ? "1 place" : "\(config.places.count) places"
                print("\(file): OK (\(places), provider \(config.provider.name.rawValue))")
                for line in config.alertSummary { print(line) }
                if let webConfigFile, let web {
                    print("\(webConfigFile): OK (\(web.summary))")
                    for warning in web.warnings() {
                        FileHandle.standardError.write(Data("\(webConfigFile): warning: \(warning)\n".utf8))
                    }
                }
                if floored.refresh.interval != config.refresh.interval {
                    print(
                        "refresh.interval raised to the provider's fair-use minimum, \(PrometheusDuration.format(floored.refresh.interval))"
                    )
                }
                if floored.warnings.interval != config.warnings.interval {
                    print(
                        "warnings.interval raised to the warning sources' fair-use minimum, \(PrometheusDuration.format(floored.warnings.interval))"
                    )
                }
                print(RefreshPlan(floored).summary)
                if inUse.refresh.interval != floored.refresh.interval {
                    print(
                        "refresh.over_quota: stretch: refreshes every \(PrometheusDuration.format(inUse.refresh.interval))"
                    )
                } else if !RefreshPlan(inUse).fits {
                    print(
                        "refresh.over_quota: \(inUse.refresh.overQuota.rawValue): keeps \(PrometheusDuration.format(inUse.refresh.interval)) and exceeds the quota"
                    )
                }
                for doubt in config.doubts(at: Date().timeIntervalSince1970) {
                    FileHandle.standardError.write(Data("\(file): warning: \(doubt)\n".utf8))
                }
                // An air quality on a quota of its own: its plan at the weather's interval, then
                // what `refresh.over_quota` made of it.
                var onWeatherInterval = inUse
                onWeatherInterval.airQuality?.stretchedInterval = nil
                if let airQuality = RefreshPlan.airQualityOnItsOwn(onWeatherInterval),
                    let inUsePlan = RefreshPlan.airQualityOnItsOwn(inUse)
                {
                    print(airQuality.summary)
                    if let stretched = inUse.airQuality?.stretchedInterval {
                        print(
                            "refresh.over_quota: stretch: the air quality refreshes every \(PrometheusDuration.format(stretched))"
                        )
                    } else if !inUsePlan.fits {
                        print(
                            "refresh.over_quota: \(inUse.refresh.overQuota.rawValue): the air quality keeps \(PrometheusDuration.format(inUsePlan.interval)) and exceeds its quota"
                        )
                    }
                    if let warning = inUsePlan.staleBetweenRefreshes(staleAfter: inUse.refresh.staleAfter) {
                        FileHandle.standardError.write(Data("\(file): warning: \(warning)\n".utf8))
                    }
                }
                if config.refresh.staleAfterIsWritten, inUse.refresh.staleAfter != config.refresh.staleAfter {
                    let wait = FairUse.longestWait(inUse)
                    let warning =
                        "\(file): warning: refresh.stale_after \(PrometheusDuration.format(config.refresh.staleAfter)) "
                        + "is shorter than a refresh; raised to \(PrometheusDuration.format(inUse.refresh.staleAfter)) "
                        + "(the longest interval in use, \(wait.of) \(PrometheusDuration.format(wait.seconds)), and half of it, "
                        + "at least refresh.timeout), or series would vanish between successes\n"
                    FileHandle.standardError.write(Data(warning.utf8))
                }
                return
            } catch {
                FileHandle.standardError.write(Data("\(error.description)\n".utf8))
                throw ExitCode(1)
            }
        }
        let format = options.logFormat
        let level = options.logLevel
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, format: format, level: level) }
        let logger = Logger(label: "cloudy_exporter")
        let app: CloudyApplication
        do {
            app = try await CloudyApplication.build(options: options, logger: logger)
        } catch let error as ConfigError {
            logger.error("bad config; nothing started", metadata: ["error": "\(error.description)"])
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            throw ExitCode(1)
        } catch {
            logger.error("start-up failed", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        try await app.run()
    }
}
