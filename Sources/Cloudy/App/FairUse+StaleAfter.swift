import Logging

extension FairUse {
    /// `refresh.stale_after` raised, when it is shorter, to outlast the longest wait between two
    /// asks of a place whose asks all succeed, with room for a slow refresh: that wait is the
    /// refresh interval in use (the weather's and the air quality's, after the fair-use floor and
    /// the quota's stretch), or `warnings.interval` when a warning source is asked, whichever is
    /// longer; the room is half of it, and at least `refresh.timeout`. Shorter, every place would
    /// lose its weather series (or its warnings) for part of every interval while its every
    /// refresh succeeds: 16 minutes of every 46 for 100 places on Open-Meteo's free quota with
    /// a 30m one. The default (30m) is raised quietly; one the config writes, with a warning.
    static func keepStaleAfterPastInterval(_ config: Config, logger: Logger) -> Config {
        let wait = longestWait(config)
        let needed = wait.seconds + max(wait.seconds / 2, config.refresh.timeout)
        guard config.refresh.staleAfter < needed else { return config }
        var raised = config
        raised.refresh.staleAfter = needed
        guard config.refresh.staleAfterIsWritten else { return raised }
        logger.warning(
            "refresh.stale_after raised to outlast a refresh: its series would vanish between successes",
            metadata: [
                "configured": "\(PrometheusDuration.format(config.refresh.staleAfter))",
                "used": "\(PrometheusDuration.format(needed))",
                "interval": "\(PrometheusDuration.format(wait.seconds))", "of": "\(wait.of)",
            ])
        return raised
    }

    /// The longest wait between two asks of a place, and whose interval it is: the weather's
    /// (`refresh.interval` as in use: raised to the fair-use floor or stretched to the quota),
    /// `warnings.interval` (a warning source asked) or the air quality's, stretched to its own
    /// quota (which the weather series then outlast too).
    public static func longestWait(_ config: Config) -> (seconds: Double, of: String) {
        var longest = (seconds: config.refresh.interval, of: "the weather's")
        if !config.warnings.sources.isEmpty, config.warnings.interval > longest.seconds {
            longest = (config.warnings.interval, "warnings.interval")
        }
        if let stretched = config.airQuality?.stretchedInterval, stretched > longest.seconds {
            longest = (stretched, "the air quality's, stretched to its own quota")
        }
        return longest
    }
}
