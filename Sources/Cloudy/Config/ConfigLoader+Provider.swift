import Foundation

/// The `provider:` section and what comes with it: the API key (a file, or `CLOUDY_API_KEY`),
/// the User-Agent, the quota, and what each provider cannot work without.
extension ConfigLoader {
    static func readProvider(_ document: YAMLMapping, into config: inout Config) throws(ConfigError) {
        if let provider = try document.mapping("provider") {
            try provider.rejectUnknownKeys(["name", "url", "api_key_file", "user_agent", "one_call", "quota"])
            let name = try provider.oneOf("name", ProviderName.self) ?? .openMeteo
            let keyFile = try provider.string("api_key_file").map { keyPath($0, besideConfig: document.file) }
            config.provider = ProviderSettings(
                name: name,
                url: try provider.url("url"),
                apiKeyFile: keyFile,
                apiKey: try keyFile.map { path throws(ConfigError) in try readKey(path, provider) },
                userAgent: try userAgent(provider)
            )
            if let oneCall = try provider.bool("one_call") {
                guard name == .openWeatherMap else {
                    throw provider.error("one_call", "applies to openweathermap only")
                }
                config.provider.oneCall = oneCall
            }
            config.quota = try quotaSettings(provider)
        }
        if config.provider.apiKey == nil { config.provider.apiKey = try environmentKey(file: document.file) }
        try checkProviderNeeds(config.provider, document)
    }

    /// Where `api_key_file: path` is: relative to the config file's directory, as the web
    /// config's paths and Prometheus' own are (a check run from that directory and the service
    /// started elsewhere read the same file). A config piped in (`--config.file=/dev/stdin`, a
    /// FIFO) has no directory of its own: the working directory's.
    static func keyPath(_ path: String, besideConfig file: String?) -> String {
        var status = stat()
        guard !path.hasPrefix("/"), let file, stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return path
        }
        let directory = (file as NSString).deletingLastPathComponent
        return directory.isEmpty ? path : directory + "/" + path
    }

    /// `provider.user_agent`: any text on one line (it is sent as a header as written), not
    /// blank: libcurl sends no User-Agent at all for "", which api.weather.gov refuses.
    static func userAgent(_ provider: YAMLMapping) throws(ConfigError) -> String? {
        guard let agent = try provider.string("user_agent") else { return nil }
        guard isOneLineOfText(agent) else {
            throw provider.error("user_agent", "must be one line of printable text")
        }
        guard agent.contains(where: { !$0.isWhitespace }) else {
            throw provider.error("user_agent", "must not be blank (leave the key out for the default)")
        }
        return agent
    }

    /// Whether `text` can go out as an HTTP header's value as written: no control character (C0,
    /// DEL, C1 such as U+0085 NEXT LINE) and no Unicode line or paragraph separator.
    static func isOneLineOfText(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: \.breaksPlainText)
    }

    /// What each provider cannot work without: OpenWeatherMap and Dark Sky a key, MET Norway a User-Agent
    /// that identifies the operator (its terms refuse generic ones).
    static func checkProviderNeeds(_ provider: ProviderSettings, _ document: YAMLMapping) throws(ConfigError) {
        let section = try document.mapping("provider")
        func error(_ key: String, _ reason: String) -> ConfigError {
            section?.error(key, reason)
                ?? ConfigError(file: document.file, line: nil, field: "provider.\(key)", reason: reason)
        }
        switch provider.name {
        case .openWeatherMap where provider.apiKey == nil, .darkSky where provider.apiKey == nil:
            throw error(
                "api_key_file", "\(provider.name.rawValue) needs an API key: give api_key_file or set CLOUDY_API_KEY")
        case .metNorway:
            guard identifiesOperator(provider.userAgent) else {
                throw error(
                    "user_agent",
                    "met-norway requires a user_agent that identifies you, e.g. \"cloudy/1.0 you@example.org\"")
            }
        default:
            break
        }
    }

    /// Whether `agent` names the software and a way to reach its operator, as MET Norway's
    /// terms ask: a contact (an e-mail address or a domain, `you@example.org`, `example.org`,
    /// `https://example.org/…`) beside a product token or a second word. A version's dot
    /// (`curl/8.0`, `python-requests/2.31`) is no contact.
    static func identifiesOperator(_ agent: String?) -> Bool {
        guard let agent, agent.contains("/") || agent.contains(" ") else { return false }
        // Cloudy's own page (its default agent, written out) names the software, not its operator.
        let operatorPart = agent.replacingOccurrences(
            of: ProviderSettings.projectPage, with: "", options: .caseInsensitive)
        func isDomain<S: StringProtocol>(_ text: S) -> Bool {
            let labels = text.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.count >= 2, let top = labels.last, top.count >= 2, top.allSatisfy(\.isLetter) else {
                return false
            }
            return labels.allSatisfy { label in
                !label.isEmpty && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
            }
        }
        let words = operatorPart.split(whereSeparator: { " ()[]<>;,+/:".contains($0) })
        return words.contains { word in
            let parts = word.split(separator: "@", omittingEmptySubsequences: false)
            if parts.count == 2 { return !parts[0].isEmpty && isDomain(parts[1]) }
            return isDomain(word)
        }
    }

    /// `provider.quota`: `unlimited`, or a mapping of `per_minute`, `per_hour`, `per_day`,
    /// `per_month` (calls as the provider counts them; the windows given replace the provider's
    /// default, the others have no limit) and `per_shard`.
    static func quotaSettings(_ provider: YAMLMapping) throws(ConfigError) -> QuotaSettings {
        guard provider.has("quota") else { return QuotaSettings() }
        if !provider.holdsMapping("quota") {
            guard let text = try provider.string("quota") else { return QuotaSettings() }
            guard text == "unlimited" else {
                throw provider.error(
                    "quota", "must be unlimited or a mapping of per_minute, per_hour, per_day, per_month, per_shard")
            }
            return QuotaSettings(stated: .unlimited)
        }
        guard let quota = try provider.mapping("quota") else { return QuotaSettings() }
        try quota.rejectUnknownKeys(QuotaWindow.allCases.map(\.configKey) + ["per_shard"])
        var limits: [QuotaWindow: Double] = [:]
        for window in QuotaWindow.allCases {
            if let limit = try quota.double(window.configKey, in: 1...1e12) { limits[window] = limit }
        }
        return QuotaSettings(
            stated: limits.isEmpty ? nil : Quota(limits: limits), perShard: try quota.bool("per_shard") ?? false)
    }

    /// Reads a key file: its first line, trimmed. The message names the file, never the key.
    static func readKey(_ path: String, _ provider: YAMLMapping) throws(ConfigError) -> Secret {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw provider.error("api_key_file", "cannot read \(path)") }
        guard let key = apiKey(text) else {
            throw provider.error("api_key_file", "\(path) holds characters an API key cannot have")
        }
        guard !key.isEmpty else { throw provider.error("api_key_file", "\(path) is empty") }
        return Secret(key)
    }

    /// The key `CLOUDY_API_KEY` holds, read as a key file is (a Kubernetes secret passed as an
    /// environment variable often ends with a newline), or nil when it is unset or blank.
    static func environmentKey(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, file: String?
    ) throws(ConfigError) -> Secret? {
        guard let text = environment["CLOUDY_API_KEY"] else { return nil }
        guard let key = apiKey(text) else {
            throw ConfigError(file: file, field: "CLOUDY_API_KEY", reason: "holds characters an API key cannot have")
        }
        return key.isEmpty ? nil : Secret(key)
    }

    /// The first line of `text`, trimmed; nil when it holds what no API key has (a control
    /// character, a space inside, anything but ASCII).
    private static func apiKey(_ text: String) -> String? {
        let key = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) ? key : nil
    }
}
