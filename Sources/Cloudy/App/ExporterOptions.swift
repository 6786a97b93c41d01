import Logging

/// The command line, parsed: what `cloudy_exporter` was asked to do. Tests build the same
/// options to drive the very application the binary runs.
public struct ExporterOptions: Sendable {
    /// nil runs the embedded default config.
    public var configFile: String?
    public var listenAddresses: [ListenAddress]
    public var telemetryPath: String
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    public var storagePath: String

    public init(configFile: String? = nil, listenAddresses: [ListenAddress] = [ListenAddress(host: nil, port: 10150)],
                telemetryPath: String = "/metrics", logLevel: Logger.Level = .info, logFormat: LogFormat = .logfmt,
                storagePath: String = "./data") {
        self.configFile = configFile
        self.listenAddresses = listenAddresses
        self.telemetryPath = telemetryPath
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.storagePath = storagePath
    }

    /// Reads the config these options point at (the embedded default when there is no file).
    public func loadConfig() throws(ConfigError) -> Config {
        guard let configFile else { return ConfigLoader.loadDefault() }
        return try ConfigLoader.load(file: configFile)
    }
}
