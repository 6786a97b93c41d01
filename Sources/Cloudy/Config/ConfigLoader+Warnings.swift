import Yams

extension ConfigLoader {
    /// `warnings:` and each place's `warnings:` override. A place may only name sources the
    /// block configures (the block says where each is reached); `met-norway` needs the same
    /// identifying `provider.user_agent` as the MET Norway weather provider, since every
    /// request goes out under it.
    static func readWarnings(_ document: YAMLMapping, into config: inout Config) throws(ConfigError) {
        if let block = try document.mapping("warnings") {
            try block.rejectUnknownKeys(["interval", "sources"])
            if let interval = try block.duration("interval", atLeast: 1) { config.warnings.interval = interval }
            if let list = try block.sequence("sources") {
                config.warnings.sources = try sources(
                    list, userAgent: config.provider.userAgent, provider: try document.mapping("provider"))
            }
        }
        guard let locations = try document.sequence("locations") else { return }
        for (index, node) in locations.items.enumerated() where index < config.places.count {
            let entry = try YAMLMapping(node, path: "locations[\(index)]", file: document.file)
            guard entry.has("warnings") else { continue }
            guard let list = try entry.sequence("warnings") else {
                config.places[index].warningSources = []
                continue
            }
            var chosen: [WarningSourceName] = []
            for item in list.items {
                let name = try sourceName(item, in: list)
                guard config.warnings.sources.contains(where: { $0.name == name }) else {
                    throw entry.error("warnings", "\(name.rawValue) is not among warnings.sources")
                }
                if chosen.contains(name) { throw entry.error("warnings", "lists \(name.rawValue) twice") }
                chosen.append(name)
            }
            config.places[index].warningSources = chosen
        }
    }

    /// The listed sources; `provider`, the config's `provider:`, whose `user_agent` an error
    /// points at when it is written but does not identify the operator.
    private static func sources(_ list: YAMLSequence, userAgent: String?, provider: YAMLMapping?) throws(ConfigError)
        -> [WarningSourceSettings]
    {
        var sources: [WarningSourceSettings] = []
        for (index, node) in list.items.enumerated() {
            let entry = try YAMLMapping(node, path: "\(list.path)[\(index)]", file: list.file)
            try entry.rejectUnknownKeys(["name", "url"])
            guard let name = try entry.oneOf("name", WarningSourceName.self) else {
                throw entry.error("name", "is required (one of: \(allSourceNames))")
            }
            if sources.contains(where: { $0.name == name }) {
                throw entry.error("name", "\(name.rawValue) is listed twice")
            }
            if name == .metNorway, !identifiesOperator(userAgent) {
                if let provider, provider.has("user_agent") {
                    throw provider.error(
                        "user_agent",
                        "the warning source met-norway (\(entry.path).name) requires a user_agent that identifies "
                            + "you, e.g. \"cloudy/1.0 you@example.org\"")
                }
                throw entry.error(
                    "name",
                    """
                    met-norway requires provider.user_agent to identify you, e.g. \
                    "cloudy/1.0 you@example.org"
                    """)
            }
            sources.append(WarningSourceSettings(name: name, url: try entry.url("url")))
        }
        return sources
    }

    private static var allSourceNames: String { WarningSourceName.allCases.map(\.rawValue).joined(separator: ", ") }

    private static func sourceName(_ node: Yams.Node, in list: YAMLSequence) throws(ConfigError) -> WarningSourceName {
        guard case .scalar(let scalar) = node, let name = WarningSourceName(rawValue: scalar.string) else {
            throw ConfigError(
                file: list.file, line: node.mark?.line ?? list.line, field: list.path,
                reason: "unknown warning source (one of: \(allSourceNames))")
        }
        return name
    }
}
