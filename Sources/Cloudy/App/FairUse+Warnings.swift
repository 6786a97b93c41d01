import Logging

extension FairUse {
    /// The least time between two asks of a warning service's public host. Warnings change
    /// within minutes and NWS asks for no more than one request per 30 s per point; MET Norway
    /// asks for alerts no more than every ten minutes, which its source keeps by honouring
    /// `Expires` whatever the interval.
    public static let minimumWarningsInterval: Double = 60

    /// `warnings.interval` raised to `minimumWarningsInterval` (and logged) when a source is
    /// asked at its public host; as written when every source is a mirror or a test fake.
    static func clampWarningsInterval(_ config: Config, logger: Logger) -> Config {
        let interval = config.warnings.interval
        guard interval < minimumWarningsInterval, let source = config.warnings.sources.first(where: \.isPublicHost)
        else { return config }
        var clamped = config
        clamped.warnings.interval = minimumWarningsInterval
        logger.warning(
            "warnings.interval raised to the warning sources' fair-use minimum",
            metadata: [
                "configured": "\(PrometheusDuration.format(interval))",
                "used": "\(PrometheusDuration.format(minimumWarningsInterval))",
                "source": "\(source.name.rawValue)",
            ])
        return clamped
    }
}
