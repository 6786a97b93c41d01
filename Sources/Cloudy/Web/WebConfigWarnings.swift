/// What a web config may hold because the exporter-toolkit accepts it (so one file serves
/// node_exporter and Cloudy alike) but Cloudy advises otherwise: each is one line saying why,
/// logged once per read of the file (start-up and each re-read) and printed by `--config.check`.
extension WebConfig {
    public func warnings() -> [String] {
        warnings(loginCPUSeconds: Bcrypt.cpuSeconds(cost:))
    }

    /// `loginCPUSeconds` gives one bcrypt check's CPU time at a cost on this machine; it is
    /// called (and measures) only when a user's cost is above `Bcrypt.advisedMaximumCost`.
    func warnings(loginCPUSeconds: (Int) -> Double) -> [String] {
        var lines: [String] = []
        if let tls {
            if tls.clientAuth == .verifyClientCertIfGiven, tls.clientCAs.isEmpty {
                lines.append(
                    "tls_server_config.client_auth_type: VerifyClientCertIfGiven without client_ca_file checks a "
                        + "client certificate against the system's trust store (as Go does), so one from any public "
                        + "CA gets in, and a client without one is served too; set client_ca_file to your CA")
            }
            if !tls.clientAllowedSANs.isEmpty, tls.clientAuth == .requireAnyClientCert {
                lines.append(
                    "tls_server_config.client_allowed_sans: with client_auth_type RequireAnyClientCert the client "
                        + "certificate's chain is never verified, so any self-signed certificate naming an allowed SAN "
                        + "gets in; use RequireAndVerifyClientCert with client_ca_file")
            }
        }
        let costly = users.compactMap { user, hash in Bcrypt.cost(of: hash).map { (user, $0) } }
            .filter { $0.1 > Bcrypt.advisedMaximumCost }.sorted { $0.0 < $1.0 }
        for (user, cost) in costly {
            lines.append(
                "basic_auth_users.\(user): bcrypt cost \(cost) is above \(Bcrypt.advisedMaximumCost): a login not yet "
                    + "cached costs about \(Self.seconds(loginCPUSeconds(cost))) of CPU here (measured now at cost "
                    + "\(Bcrypt.measuredCost), doubled per step), and every uncached login of any user pays the highest "
                    + "cost, one at a time; 10 is usual (htpasswd -nBC 10)")
        }
        if let rateLimit {
            if rateLimit.isOff {
                lines.append(
                    "rate_limit.interval: 0 turns the rate limit off (as in the toolkit); burst \(rateLimit.burst) "
                        + "is not used")
            } else if rateLimit.burst == 0 {
                lines.append(
                    "rate_limit.burst: 0 answers every request 429 (as the toolkit's limiter does); "
                        + "give burst at least 1 to let requests in")
            }
        }
        return lines
    }

    /// "0.8 s", "16.4 s", "262 s": one decimal below ten seconds.
    static func seconds(_ value: Double) -> String {
        value >= 10 ? "\(Int(value.rounded())) s" : "\((value * 10).rounded() / 10) s"
    }
}
