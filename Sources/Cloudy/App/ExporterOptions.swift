import Logging

/// The command line, parsed: what `cloudy_exporter` was asked to do.
public struct ExporterOptions: Sendable {
    /// nil runs the embedded default config.
    public var configFile: String?
    public var listenAddresses: [ListenAddress]
    public var telemetryPath: String
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    public var storagePath: String
    /// `--shard`; nil leaves the config's `shard:` (default 0/1) in force.
    public var shard: Shard?
    /// `--web.max-connections`: client connections open at once; more are closed at once.
    public var maxConnections: Int = ConnectionLimit.defaultMaximum
    /// `--web.config.file`: TLS, basic auth, rate limit (docs/web-config.md); nil serves plain HTTP.
    public var webConfigFile: String?

    public init(
        configFile: String? = nil, listenAddresses: [ListenAddress] = [ListenAddress(host: nil, port: 10150)],
        telemetryPath: String = "/metrics", logLevel: Logger.Level = .info, logFormat: LogFormat = .logfmt,
        storagePath: String = "./data", shard: Shard? = nil, webConfigFile: String? = nil
    ) {
        self.configFile = configFile
        self.listenAddresses = listenAddresses
        self.telemetryPath = telemetryPath
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.storagePath = storagePath
        self.shard = shard
        self.webConfigFile = webConfigFile
    }

    /// Reads the config these options point at (the embedded default when there is no file),
    /// keeping only the places this replica's shard owns.
    public func loadConfig() throws(ConfigError) -> Config {
        var config =
            try configFile.map { path throws(ConfigError) in try ConfigLoader.load(file: path) }
            ?? ConfigLoader.loadDefault()
        if let shard { config.shard = shard }
        config.places = config.places.filter { config.shard.owns($0.name) }
        return config
    }
}
