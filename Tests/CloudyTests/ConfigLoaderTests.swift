import Foundation
import XCTest

@testable import Cloudy

final class ConfigLoaderTests: XCTestCase {
    let directory = TestPaths.fixtures.appendingPathComponent("config")

    func testGoodConfigReadsEveryKey() throws {
        let path = directory.appendingPathComponent("good.yml").path
        let config = try ConfigLoader.load(file: path)
        XCTAssertEqual(config.provider.name, .openMeteo)
        XCTAssertEqual(config.provider.url, "http://127.0.0.1:8080", "a trailing slash is dropped")
        XCTAssertEqual(config.provider.userAgent, "cloudy-test/1.0 ops@example.org")
        XCTAssertEqual(config.geocodingURL, "http://127.0.0.1:8081")
        XCTAssertEqual(config.refresh, RefreshSettings(interval: 90, timeout: 2, staleAfter: 3600, parallelRequests: 8))
        XCTAssertEqual(
            config.units,
            UnitSettings(temperature: [.celsius, .fahrenheit], windSpeed: [.kilometersPerHour], time: .h12))
        XCTAssertEqual(config.forecast, ForecastSettings(days: 3, hours: 12))
        XCTAssertEqual(config.shard, .all)
        XCTAssertEqual(config.places.map(\.name), ["Brussels", "Springfield", "Aachen"])
        XCTAssertEqual(
            config.warnings,
            WarningSettings(
                interval: 120,
                sources: [
                    WarningSourceSettings(name: .nws, url: "http://127.0.0.1:8082"), WarningSourceSettings(name: .dwd),
                ]
            ))
        XCTAssertEqual(config.warnings.sources[1].url, "https://api.brightsky.dev", "the default public URL")
        XCTAssertEqual(config.places.map(\.warningSources), [nil, [.nws], []])
        XCTAssertEqual(config.places[0].units, config.units, "a place without override gets the global units")
        XCTAssertEqual(config.places[1].latitude, 39.80172)
        XCTAssertEqual(config.places[1].timezone, "America/Chicago")
        XCTAssertEqual(
            config.places[1].units,
            UnitSettings(temperature: [.fahrenheit], windSpeed: [.milesPerHour, .knots], time: .h12),
            "an override replaces only the units it names")
        XCTAssertEqual(config.places[0].alerts, config.alerts, "a place without alerts: gets the top level's")
        let global = config.alerts
        let place = config.places[1].alerts
        let expected: [(WeatherAlert, Double?, Double?)] = [
            (.frost, -2, 3), (.heat, 30, nil), (.wind, 60 / 3.6, 60 / 3.6), (.gust, 50 * 1852 / 3600.0, 17.8816),
            (.precipitation, 0.02032, 0.02), (.uv, 9, 9), (.airQuality, nil, 150),
        ]
        for (alert, globalValue, placeValue) in expected {
            for (actual, wanted, whose) in [
                (global[alert], globalValue, "alerts"), (place[alert], placeValue, "place"),
            ] {
                if let wanted, let actual {
                    XCTAssertEqual(actual, wanted, accuracy: 1e-9, "\(whose) \(alert)")
                } else {
                    XCTAssertEqual(actual == nil, wanted == nil, "\(whose) \(alert) off")
                }
            }
        }
        XCTAssertEqual(
            config.airQuality, AirQualitySettings(source: .openMeteo, url: "http://127.0.0.1:8082", pollen: false))
    }

    /// Every `invalid-*.yml` states on its first line (`# expect: LINE: FIELD: REASON`) the one
    /// message Cloudy must give for it; the file name and line are checked too.
    func testEveryInvalidConfigGivesItsExpectedMessage() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("invalid-") && $0.hasSuffix(".yml") }
            .sorted()
        XCTAssertGreaterThanOrEqual(files.count, 10)
        for file in files {
            let path = directory.appendingPathComponent(file).path
            let text = try String(contentsOfFile: path, encoding: .utf8)
            guard let first = text.split(separator: "\n").first, first.hasPrefix("# expect: ") else {
                XCTFail("\(file) has no '# expect:' line")
                continue
            }
            let expected = path + ":" + first.dropFirst("# expect: ".count)
            do {
                _ = try ConfigLoader.load(file: path)
                XCTFail("\(file) was accepted")
            } catch {
                XCTAssertEqual(error.description, expected, file)
            }
        }
    }

    /// A duplicate key's line is found whatever ends the lines: a file written on Windows (CRLF)
    /// or with bare CRs trapped the process, on a reload too, when the line was looked for.
    func testADuplicateKeyIsNamedWhateverEndsTheLines() {
        let lines = [
            "refresh:", "  interval: 1m", "  interval: 2m", "locations:",
            "  - {name: Oslo, latitude: 59.9, longitude: 10.7}",
        ]
        for lineBreak in ["\n", "\r\n", "\r"] {
            let yaml = lines.joined(separator: lineBreak) + lineBreak
            XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml, file: "c.yml")) {
                XCTAssertEqual("\($0)", "c.yml:3: refresh.interval: duplicate key", lineBreak.debugDescription)
            }
            XCTAssertThrowsError(
                try WebConfigLoader.parse(
                    yaml: "rate_limit:\(lineBreak)  burst: 1\(lineBreak)  burst: 2", file: "w.yml")
            ) {
                XCTAssertEqual("\($0)", "w.yml:3: rate_limit.burst: duplicate key", lineBreak.debugDescription)
            }
        }
    }

    /// A duplicate key is named by its field's path, as every other error is: in a list, in a
    /// flow mapping whose values hold commas, brackets and quotes, beside another duplicate of the
    /// same mapping, inside a mapping whose own key is written twice. A flow mapping that spans
    /// lines still gets the key and the first's line.
    func testADuplicateKeyIsNamedByItsPath() {
        let place = "  - {name: A, latitude: 1, longitude: 2}\n"
        let cases = [
            "locations:\n\(place)  - name: B\n    latitude: 1\n    longitude: 2\n"
                + "    alerts: {frost: \"1 °C\", heat: \"3{0,\", \"frost\": \"2 °C\"}\n":
                "c.yml:6: locations[1].alerts.frost: duplicate key",
            "locations:\n  - {name: \"Zü,r{ich\", name: B, latitude: 1, longitude: 2}\n":
                "c.yml:2: locations[0].name: duplicate key",
            "refresh:\n  interval: 1m\n  stale_after: 1h\n  interval: 2m\n  stale_after: 2h\nlocations:\n\(place)":
                "c.yml:4: refresh.interval: duplicate key (so is stale_after)",
            "alerts:\nalerts:\n  frost: 1 °C\n  frost: 2 °C\nlocations:\n\(place)":
                "c.yml:4: alerts.frost: duplicate key",
            "locations:\n  - {name: A, latitude: 1,\n     latitude: 2, longitude: 2}\n":
                "c.yml:2: duplicate key: latitude",
        ]
        for (yaml, message) in cases {
            XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml, file: "c.yml")) { XCTAssertEqual("\($0)", message) }
        }
    }

    /// A value with a line break, quoted in the message, keeps the message on one line, and one
    /// with an escape sequence does not reach the terminal as one.
    func testAQuotedLineBreakKeepsTheMessageOnOneLine() {
        let yaml =
            "provider:\n  name: \"x\\r\\ny\\u2028z\"\nlocations:\n  - {name: Oslo, latitude: 59.9, longitude: 10.7}\n"
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml, file: "c.yml")) {
            XCTAssertTrue("\($0)".hasPrefix(#"c.yml:2: provider.name: unknown value "x\r\ny\u{2028}z""#), "\($0)")
        }
        let escape = yaml.replacingOccurrences(of: "x\\r\\ny\\u2028z", with: "\\e[31mred\\tx\\u0085")
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: escape, file: "c.yml")) {
            XCTAssertTrue(
                "\($0)".hasPrefix(#"c.yml:2: provider.name: unknown value "\u{1B}[31mred\tx\u{0085}""#), "\($0)")
        }
    }

    /// A URL's port is checked where Foundation spells it: a non-ASCII host or user before the
    /// port made the check index past the text as written, and trapped.
    func testAPortAfterANonASCIIHostOrUserIsRead() throws {
        for url in ["http://wetter.münchen.example:8080", "http://ü@h:80", "https://ü.example"] {
            let yaml = "provider:\n  url: \(url)\nlocations:\n  - {name: Oslo, latitude: 59.9, longitude: 10.7}\n"
            XCTAssertEqual(try ConfigLoader.parse(yaml: yaml, file: "c.yml").provider.url, url)
        }
        let ports = [
            "http://[::1]:8080": true, "http://[::1]": true, "http://h:": true, "http://u:p@h:443/x": true,
            "http://[::1]:99999": false, "http://u:p@h:0": false, "http://h:+80": false, "http://h:0000080": false,
        ]
        for (url, valid) in ports { XCTAssertEqual(YAMLMapping.portIsValid(in: url), valid, url) }
        let yaml = "provider:\n  url: http://x:70000\nlocations:\n  - {name: Oslo, latitude: 59.9, longitude: 10.7}\n"
        XCTAssertThrowsError(try ConfigLoader.parse(yaml: yaml, file: "c.yml")) {
            XCTAssertEqual(
                "\($0)", #"c.yml:2: provider.url: "http://x:70000": the port must be 1 to 65535, in at most 5 digits"#)
        }
    }

    func testEmbeddedDefaultHasFiveCitiesOnFiveContinents() throws {
        let config = try ConfigLoader.parse(yaml: DefaultConfig.yaml, file: DefaultConfig.fileName)
        XCTAssertEqual(config.places.map(\.name), ["Berlin", "New York", "Tokyo", "Sydney", "Cape Town"])
        XCTAssertEqual(config.provider.url, "https://api.open-meteo.com")
        XCTAssertEqual(config.refresh.interval, 600)
    }

    /// `CLOUDY_API_KEY` is read as a key file's first line is: a trailing newline (a Kubernetes
    /// secret made from a file) or spaces are trimmed; a key with a character no key has is an error.
    func testTheKeyFromTheEnvironmentIsTrimmedAndChecked() throws {
        for (text, key) in [("k3y\n", "k3y"), (" k3y \r\n", "k3y"), ("k3y", "k3y")] {
            XCTAssertEqual(try ConfigLoader.environmentKey(["CLOUDY_API_KEY": text], file: nil)?.reveal, key)
        }
        for blank in ["", "\n", "  "] {
            XCTAssertNil(try ConfigLoader.environmentKey(["CLOUDY_API_KEY": blank], file: nil))
        }
        XCTAssertNil(try ConfigLoader.environmentKey([:], file: nil))
        XCTAssertThrowsError(try ConfigLoader.environmentKey(["CLOUDY_API_KEY": "k3y with spaces"], file: "c.yml")) {
            XCTAssertEqual("\($0)", "c.yml: CLOUDY_API_KEY: holds characters an API key cannot have")
        }
    }

    /// A file that cannot be read says why in the system's words: a directory is one, and so is a
    /// device that never ends (`/dev/zero`: too large). A FIFO without a writer is refused at
    /// once, not waited for nor read as an empty file; a config piped to `/dev/stdin` is read.
    /// A relative `api_key_file` is read beside the config file, whatever the working directory
    /// (a check run there and the service started elsewhere read the same key).
    func testARelativeKeyFileIsReadBesideTheConfig() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "beside\n".write(to: directory.appendingPathComponent("key"), atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("cloudy.yml")
        let yaml =
            "provider: {name: dark-sky, api_key_file: key}\nlocations:\n  - {name: A, latitude: 1, longitude: 2}\n"
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try ConfigLoader.load(file: file.path).provider.apiKey?.reveal, "beside")
        try yaml.replacingOccurrences(of: "api_key_file: key", with: "api_key_file: gone")
            .write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ConfigLoader.load(file: file.path)) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.description,
                "\(file.path):1: provider.api_key_file: cannot read \(directory.path)/gone")
        }
        // A config piped in (a FIFO, as /dev/stdin is) has no directory: the working directory's.
        let pipe = directory.appendingPathComponent("piped.yml")
        XCTAssertEqual(mkfifo(pipe.path, 0o600), 0)
        XCTAssertEqual(ConfigLoader.keyPath("key", besideConfig: pipe.path), "key")
        XCTAssertEqual(ConfigLoader.keyPath("key", besideConfig: file.path), directory.path + "/key")
        XCTAssertEqual(ConfigLoader.keyPath("/etc/key", besideConfig: file.path), "/etc/key")
    }

    func testMissingFileIsAClearError() throws {
        XCTAssertThrowsError(try ConfigLoader.load(file: "/nonexistent/cloudy.yml")) { error in
            XCTAssertEqual("\(error)", "/nonexistent/cloudy.yml: cannot read the file: No such file or directory")
        }
        XCTAssertThrowsError(try ConfigLoader.load(file: "/tmp")) { error in
            XCTAssertEqual("\(error)", "/tmp: cannot read the file: Is a directory")
        }
        XCTAssertThrowsError(try ConfigLoader.load(file: "/dev/zero")) { error in
            XCTAssertEqual("\(error)", "/dev/zero: cannot read the file: File too large")
        }
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-fifo-\(UUID())").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        defer { unlink(fifo) }
        XCTAssertThrowsError(try WebConfigLoader.load(file: fifo)) { error in
            XCTAssertEqual(
                "\(error)",
                "\(fifo): cannot read the web config file: nothing came from it (a pipe or FIFO without a writer?)",
                "not an empty web config: plain HTTP without a login")
        }
        let yaml = "locations:\n  - {name: Oslo, latitude: 59.9, longitude: 10.7}\n"
        let piped = try runProgram(
            TestPaths.exporterBinary.path, ["--config.file=/dev/stdin", "--config.check"], input: Data(yaml.utf8))
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertTrue(piped.stdout.hasPrefix("/dev/stdin: OK (1 place, provider open-meteo)"), piped.stdout)
        XCTAssertThrowsError(try WebConfigLoader.load(file: "/dev/zero")) { error in
            XCTAssertEqual("\(error)", "/dev/zero: cannot read the web config file: File too large")
        }
    }

    func testDurationsAreReadThePrometheusWay() {
        XCTAssertEqual(PrometheusDuration.parse("30s"), 30)
        XCTAssertEqual(PrometheusDuration.parse("10m"), 600)
        XCTAssertEqual(PrometheusDuration.parse("1h30m"), 5400)
        XCTAssertEqual(PrometheusDuration.parse("1d"), 86400)
        XCTAssertEqual(PrometheusDuration.parse("1500ms"), 1.5)
        XCTAssertEqual(PrometheusDuration.parse("0"), 0)
        for bad in ["", "10", "m", "1m1h", "1.5m", "10 m", "-1s", "1x"] {
            XCTAssertNil(PrometheusDuration.parse(bad), bad)
        }
        XCTAssertEqual(PrometheusDuration.format(5400), "1h30m")
        XCTAssertEqual(PrometheusDuration.format(0.5), "500ms")
    }

    func testShardsCoverEveryPlaceExactlyOnce() {
        let names = (0..<500).map { "Place \($0)" }
        let shards = (0..<3).map { Shard(index: $0, count: 3) }
        for name in names {
            XCTAssertEqual(shards.filter { $0.owns(name) }.count, 1, name)
        }
        let sizes = shards.map { shard in names.filter(shard.owns).count }
        XCTAssertTrue(sizes.allSatisfy { $0 > 120 }, "the hash spreads places evenly: \(sizes)")
        // FNV-1a's published vectors: the hash (and so every shard's places) is the same everywhere.
        XCTAssertEqual(Shard.hash(""), 0xcbf2_9ce4_8422_2325)
        XCTAssertEqual(Shard.hash("a"), 0xaf63_dc4c_8601_ec8c)
        XCTAssertEqual(Shard.hash("Brussels"), 11_512_716_590_114_912_540)
        XCTAssertNil(Shard("1/1"))
        XCTAssertNil(Shard("a/b"))
        XCTAssertEqual(Shard("2/5"), Shard(index: 2, count: 5))
    }
}

extension ConfigLoaderTests {
    /// MET Norway's terms ask for a User-Agent that names a way to reach its operator: an e-mail
    /// address or a domain, not a version's dot.
    func testAUserAgentIdentifiesItsOperatorByAContactNotAVersion() {
        for agent in [
            "cloudy/1.0 ops@example.org", "cloudy/1.0 (+https://weather.example.org/about)", "acme.example.com/2.1",
            "cloudy-tests/1.0 ops@example.org", "Cloudy weather.example.no",
            ProviderSettings().userAgentInUse + " ops@example.org",
        ] {
            XCTAssertTrue(ConfigLoader.identifiesOperator(agent), agent)
        }
        for agent in [
            nil, "curl/8.0", "python-requests/2.31.0", "cloudy-review/1.0", "cloudy", "ops@example.org",
            "cloudy/1.0 ops@localhost", "cloudy/1.0 @example.org", "Mozilla/5.0 (X11; Linux x86_64)",
            ProviderSettings().userAgentInUse,  // Cloudy's own, written out: its page is not its operator's
            "cloudy_exporter/0.1.0 (+http://GitHub.com/cloudy-exporter/cloudy)",
        ] {
            XCTAssertFalse(ConfigLoader.identifiesOperator(agent), agent ?? "nil")
        }
    }
}
