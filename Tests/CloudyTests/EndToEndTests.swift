import Foundation
import XCTest

@testable import Cloudy

/// The real `cloudy_exporter` binary against the fake Open-Meteo on 127.0.0.1, over real HTTP,
/// through the real libcurl client. Expected values come from the shared fixtures, which the fake
/// serves: place 0 gets Berlin's values, place 1 London's, place 2 New York's.
final class EndToEndTests: FakeWeatherTestCase {

    func config(units: String, interval: String = "1h", extra: String = "") -> String {
        """
        provider:
          url: \(fake.baseURL)
        refresh:
          interval: \(interval)
          timeout: 2s
        units:
        \(units)
        forecast:
          days: 7
          hours: 24
        \(extra)
        locations:
        \(Self.threeCities)
        """
    }

    /// Fixture values (Open-Meteo default units: °C, km/h, %, hPa, mm) for the three places.
    struct Expected {
        let name: String
        let temperature, apparent, dewPoint, humidity, wind, gust, direction, pressure, cloud, precipitation, uv,
            visibility: Double
        let isDay, code: Double
        let observed: Double
        let dailyMax0, dailyMin1, dailyPrecipitation0, dailyProbability0, dailyWind0, dailyGust0, dailyUV0, dailyCode0,
            sunrise0, sunset0: Double
        let hourlyTemperature1, hourlyProbability1, hourlyPrecipitation1, hourlyWind1, hourlyCode1: Double
    }

    static func expected() throws -> [Expected] {
        let places = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: TestPaths.fixture("open-meteo-forecast-multi.json"))
                as? [[String: Any]])
        return try zip(["Berlin", "London", "New York"], places).map { name, json in
            let current = try XCTUnwrap(json["current"] as? [String: Double])
            let daily = try XCTUnwrap(json["daily"] as? [String: [Double]])
            let hourly = try XCTUnwrap(json["hourly"] as? [String: [Double]])
            // Hour 1 is the step one hour after the current whole hour.
            let base = (current["time"]! / 3600).rounded(.down) * 3600
            let index = try XCTUnwrap(hourly["time"]!.firstIndex(of: base + 3600))
            return Expected(
                name: name, temperature: current["temperature_2m"]!, apparent: current["apparent_temperature"]!,
                dewPoint: current["dew_point_2m"]!, humidity: current["relative_humidity_2m"]!,
                wind: current["wind_speed_10m"]!,
                gust: current["wind_gusts_10m"]!, direction: current["wind_direction_10m"]!,
                pressure: current["pressure_msl"]!,
                cloud: current["cloud_cover"]!, precipitation: current["precipitation"]!, uv: current["uv_index"]!,
                visibility: current["visibility"]!, isDay: current["is_day"]!, code: current["weather_code"]!,
                observed: current["time"]!,
                dailyMax0: daily["temperature_2m_max"]![0], dailyMin1: daily["temperature_2m_min"]![1],
                dailyPrecipitation0: daily["precipitation_sum"]![0],
                dailyProbability0: daily["precipitation_probability_max"]![0],
                dailyWind0: daily["wind_speed_10m_max"]![0], dailyGust0: daily["wind_gusts_10m_max"]![0],
                dailyUV0: daily["uv_index_max"]![0],
                dailyCode0: daily["weather_code"]![0], sunrise0: daily["sunrise"]![0], sunset0: daily["sunset"]![0],
                hourlyTemperature1: hourly["temperature_2m"]![index],
                hourlyProbability1: hourly["precipitation_probability"]![index],
                hourlyPrecipitation1: hourly["precipitation"]![index], hourlyWind1: hourly["wind_speed_10m"]![index],
                hourlyCode1: hourly["weather_code"]![index]
            )
        }
    }

    /// Checks every family of the contract for every place, in the given units.
    func assertEveryFamily(_ metrics: [String: Double], temperature: TemperatureUnit, wind: WindSpeedUnit) throws {
        func t(_ celsius: Double) -> Double { temperature.fromCelsius(celsius) }
        func w(_ kmh: Double) -> Double { kmh / wind.kilometersPerHour }
        let tUnit = temperature.rawValue
        let wUnit = wind.rawValue
        for e in try Self.expected() {
            let l = "location=\"\(e.name)\""
            assertClose(metrics["weather_up{\(l)}"], 1, e.name)
            assertClose(metrics["weather_temperature_\(tUnit){\(l)}"], t(e.temperature), e.name)
            assertClose(metrics["weather_apparent_temperature_\(tUnit){\(l)}"], t(e.apparent), e.name)
            assertClose(metrics["weather_dew_point_\(tUnit){\(l)}"], t(e.dewPoint), e.name)
            assertClose(metrics["weather_relative_humidity_ratio{\(l)}"], e.humidity / 100, e.name)
            assertClose(metrics["weather_wind_speed_\(wUnit){\(l)}"], w(e.wind), e.name)
            assertClose(metrics["weather_wind_gust_speed_\(wUnit){\(l)}"], w(e.gust), e.name)
            assertClose(metrics["weather_wind_direction_degrees{\(l)}"], e.direction, e.name)
            assertClose(metrics["weather_pressure_msl_pascals{\(l)}"], e.pressure * 100, e.name)
            assertClose(metrics["weather_cloud_cover_ratio{\(l)}"], e.cloud / 100, e.name)
            assertClose(metrics["weather_precipitation_meters{\(l)}"], e.precipitation / 1000, e.name)
            assertClose(metrics["weather_uv_index{\(l)}"], e.uv, e.name)
            assertClose(metrics["weather_visibility_meters{\(l)}"], e.visibility, e.name)
            assertClose(metrics["weather_is_day{\(l)}"], e.isDay, e.name)
            assertClose(metrics["weather_condition_code{\(l)}"], e.code, e.name)
            assertClose(metrics["weather_observation_timestamp_seconds{\(l)}"], e.observed, e.name)
            let condition = WeatherCondition(code: Int(e.code), isDay: e.isDay == 1)
            assertClose(
                metrics[
                    "weather_condition_info{\(l),code=\"\(Int(e.code))\",condition=\"\(condition.text)\",icon=\"\(condition.icon)\"}"
                ], 1, e.name)

            let d0 = "\(l),day=\"0\""
            let d1 = "\(l),day=\"1\""
            assertClose(metrics["weather_forecast_daily_temperature_max_\(tUnit){\(d0)}"], t(e.dailyMax0), e.name)
            assertClose(metrics["weather_forecast_daily_temperature_min_\(tUnit){\(d1)}"], t(e.dailyMin1), e.name)
            assertClose(
                metrics["weather_forecast_daily_precipitation_sum_meters{\(d0)}"], e.dailyPrecipitation0 / 1000, e.name)
            assertClose(
                metrics["weather_forecast_daily_precipitation_probability_ratio{\(d0)}"], e.dailyProbability0 / 100,
                e.name)
            assertClose(metrics["weather_forecast_daily_wind_speed_max_\(wUnit){\(d0)}"], w(e.dailyWind0), e.name)
            assertClose(metrics["weather_forecast_daily_wind_gust_speed_max_\(wUnit){\(d0)}"], w(e.dailyGust0), e.name)
            assertClose(metrics["weather_forecast_daily_uv_index_max{\(d0)}"], e.dailyUV0, e.name)
            assertClose(metrics["weather_forecast_daily_condition_code{\(d0)}"], e.dailyCode0, e.name)
            assertClose(metrics["weather_forecast_daily_sunrise_timestamp_seconds{\(d0)}"], e.sunrise0, e.name)
            assertClose(metrics["weather_forecast_daily_sunset_timestamp_seconds{\(d0)}"], e.sunset0, e.name)
            XCTAssertNotNil(
                metrics["weather_forecast_daily_temperature_max_\(tUnit){\(l),day=\"6\"}"], "seven days: 0…6")
            XCTAssertNil(metrics["weather_forecast_daily_temperature_max_\(tUnit){\(l),day=\"7\"}"])

            let h1 = "\(l),hour=\"1\""
            assertClose(metrics["weather_forecast_hourly_temperature_\(tUnit){\(h1)}"], t(e.hourlyTemperature1), e.name)
            assertClose(
                metrics["weather_forecast_hourly_precipitation_probability_ratio{\(h1)}"], e.hourlyProbability1 / 100,
                e.name)
            assertClose(
                metrics["weather_forecast_hourly_precipitation_meters{\(h1)}"], e.hourlyPrecipitation1 / 1000, e.name)
            assertClose(metrics["weather_forecast_hourly_wind_speed_\(wUnit){\(h1)}"], w(e.hourlyWind1), e.name)
            assertClose(metrics["weather_forecast_hourly_condition_code{\(h1)}"], e.hourlyCode1, e.name)
            XCTAssertNil(
                metrics["weather_forecast_hourly_temperature_\(tUnit){\(l),hour=\"0\"}"],
                "hour 0 (now) is not a forecast")

            // Unix seconds of this run's refresh (not milliseconds, not the answer's own time).
            let now = Date().timeIntervalSince1970
            let success = try XCTUnwrap(metrics["weather_last_success_timestamp_seconds{\(l)}"], e.name)
            let attempt = try XCTUnwrap(metrics["weather_last_attempt_timestamp_seconds{\(l)}"], e.name)
            XCTAssertTrue((now - 120...now).contains(success), "\(e.name): \(success) at \(now)")
            XCTAssertTrue((success...now).contains(attempt), "\(e.name): attempt \(attempt), success \(success)")
        }
    }

    func testCelsiusAndKilometresPerHourFromOneUpstreamRequest() throws {
        let exporter = try ExporterProcess(
            config: config(units: "  temperature: celsius\n  wind_speed: kilometers_per_hour"))
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        try assertEveryFamily(metrics, temperature: .celsius, wind: .kilometersPerHour)
        XCTAssertNil(
            metrics["weather_temperature_fahrenheit{location=\"Berlin\"}"], "only the configured unit's families")
        XCTAssertNil(metrics["weather_wind_speed_meters_per_second{location=\"Berlin\"}"])
        assertClose(
            metrics[
                "weather_location_info{location=\"London\",latitude=\"51.5085\",longitude=\"-0.1257\",timezone=\"Europe/London\",provider=\"open-meteo\"}"
            ], 1)

        let requests = try fake.requests()
        XCTAssertEqual(requests.count, 1, "three places, one upstream request")
        let query = try XCTUnwrap(requests.first?["query"] as? [String: String])
        XCTAssertEqual(query["latitude"], "52.52,51.5085,40.7143")
        XCTAssertEqual(query["longitude"], "13.41,-0.1257,-74.006")
        XCTAssertEqual(query["timeformat"], "unixtime")
        let headers = try XCTUnwrap(requests.first?["headers"] as? [String: String])
        XCTAssertTrue(headers["user-agent"]?.hasPrefix("cloudy_exporter/") == true, "identifying User-Agent")
        assertClose(metrics["cloudy_exporter_upstream_requests_total{provider=\"open-meteo\",code=\"200\"}"], 1)
        assertClose(metrics["cloudy_exporter_refresh_interval_seconds"], 3600)
        assertClose(metrics["cloudy_exporter_refresh_duration_seconds_count"], 1)
        assertClose(metrics["cloudy_exporter_config_last_reload_successful"], 1)
        XCTAssertNotNil(
            metrics[
                "cloudy_exporter_build_info{version=\"\(BuildInfo.version)\",revision=\"\(BuildInfo.revision)\",swift_version=\"\(BuildInfo.swiftVersion)\"}"
            ])
        for family in [
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
            "process_open_fds", "process_max_fds", "process_start_time_seconds",
        ] {
            XCTAssertNotNil(metrics[family], family)
        }
        XCTAssertGreaterThan(metrics["process_resident_memory_bytes"] ?? 0, 1_000_000)

        // promtool's only remark may be the base-unit notice for km/h.
        let body = try exporter.get("/metrics").body
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(body))
        for line in (result.stdout + result.stderr).split(separator: "\n") {
            XCTAssertTrue(line.contains("use base unit"), String(line))
        }
    }

    func testFahrenheitAndMilesPerHour() throws {
        let exporter = try ExporterProcess(
            config: config(units: "  temperature: fahrenheit\n  wind_speed: miles_per_hour"))
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        try assertEveryFamily(metrics, temperature: .fahrenheit, wind: .milesPerHour)
        XCTAssertNil(metrics["weather_temperature_celsius{location=\"Berlin\"}"])
    }

    func testBaseUnitsAndSeveralUnitsAtOnce() throws {
        let units = "  temperature: [celsius, fahrenheit]\n  wind_speed: [meters_per_second, knots]"
        let exporter = try ExporterProcess(config: config(units: units))
        try exporter.waitFor("/readyz")
        let metrics = try exporter.metrics()
        try assertEveryFamily(metrics, temperature: .celsius, wind: .metersPerSecond)
        try assertEveryFamily(metrics, temperature: .fahrenheit, wind: .knots)
    }

    /// Run without capabilities, as the systemd unit, the image and the pod run it.
    func testDefaultUnitsGiveAPagePromtoolFindsCleanToAnUnprivilegedExporter() throws {
        let exporter = try ExporterProcess(config: config(units: "  time: 24h"), unprivileged: true)
        try exporter.waitFor("/readyz")
        let body = try exporter.get("/metrics").body
        let result = try runProgram(try promtoolPath(), ["check", "metrics"], input: Data(body))
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout + result.stderr, "")
        try assertEveryFamily(try exporter.metrics(), temperature: .celsius, wind: .metersPerSecond)
    }

    /// SIGTERM and SIGINT stop the exporter gracefully and quickly. (What each endpoint answers,
    /// formats, gzip, HEAD and errors are tested in-process: RoutesTests, HTTPRequestHandlerTests.)
    func testSIGTERMAndSIGINTStopWithinTwoSecondsAndExitZero() throws {
        for signal in [SIGTERM, SIGINT] {
            let exporter = try ExporterProcess(config: config(units: "  time: 24h"))
            try exporter.waitFor("/readyz")
            let stopped = exporter.terminate(signal: signal)
            XCTAssertEqual(stopped.status, 0, "signal \(signal): \(exporter.log)")
            XCTAssertLessThan(stopped.seconds, 2, "signal \(signal)")
            XCTAssertTrue(exporter.log.contains("server stopped"), exporter.log)
        }
    }

    func testBadConfigExitsOneAndNamesTheField() throws {
        let bad = config(units: "  temperature: kelvin")
        let exporter = try ExporterProcess(config: bad)
        exporter.process.waitUntilExit()
        XCTAssertEqual(exporter.process.terminationStatus, 1)
        XCTAssertTrue(exporter.log.contains("units.temperature: unknown value \"kelvin\""), exporter.log)
        XCTAssertFalse(exporter.log.contains("listening"), "nothing started")

        let check = try runProgram(
            TestPaths.exporterBinary.path, ["--config.check", "--config.file", exporter.configFile.path])
        XCTAssertEqual(check.status, 1)
        XCTAssertEqual(
            check.stderr,
            "\(exporter.configFile.path):7: units.temperature: unknown value \"kelvin\" (one of: celsius, fahrenheit)\n"
        )

        try config(units: "  temperature: celsius").write(to: exporter.configFile, atomically: true, encoding: .utf8)
        let good = try runProgram(
            TestPaths.exporterBinary.path, ["--config.check", "--config.file=\(exporter.configFile.path)"])
        XCTAssertEqual(good.status, 0, good.stderr)
    }

    func testFailingUpstreamKeepsLastValuesAndServes() throws {
        let exporter = try ExporterProcess(config: config(units: "  time: 24h", interval: "1s"))
        try exporter.waitFor("/readyz")
        try fake.control("fault", "{\"mode\": \"status\", \"status\": 503}")
        let metrics = try exporter.metrics { $0["weather_up{location=\"Berlin\"}"] == 0 }
        assertClose(metrics["weather_up{location=\"Berlin\"}"], 0)
        assertClose(
            metrics["weather_temperature_celsius{location=\"Berlin\"}"], 24.5, "last good value stays until stale_after"
        )
        XCTAssertGreaterThanOrEqual(
            metrics["cloudy_exporter_upstream_requests_total{provider=\"open-meteo\",code=\"503\"}"] ?? 0, 1)
        XCTAssertTrue(exporter.log.contains("level=warn msg=\"place refresh failed\""), exporter.log)
        XCTAssertEqual(try exporter.get("/readyz").status, 200, "places that succeeded once keep the exporter ready")
    }

    func testReloadAddsAndRemovesPlaces() throws {
        let exporter = try ExporterProcess(config: config(units: "  time: 24h"))
        try exporter.waitFor("/readyz")
        let smaller = config(units: "  time: 24h").replacingOccurrences(
            of: "  - name: New York\n    latitude: 40.7143\n    longitude: -74.006",
            with: "  - name: Oslo\n    latitude: 59.91\n    longitude: 10.75")
        try smaller.write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        XCTAssertNil(try exporter.metrics()["weather_up{location=\"New York\"}"], "a removed place vanishes at once")
        var metrics = try exporter.metrics { $0["weather_up{location=\"Oslo\"}"] == 1 }
        assertClose(metrics["weather_up{location=\"Oslo\"}"], 1, "an added place appears after its first refresh")

        try "locations: []".write(to: exporter.configFile, atomically: true, encoding: .utf8)
        let refused = try exporter.post("/-/reload")
        XCTAssertEqual(refused.status, 500)
        XCTAssertTrue(String(decoding: refused.body, as: UTF8.self).contains("locations: is empty"))
        metrics = try exporter.metrics()
        assertClose(metrics["cloudy_exporter_config_last_reload_successful"], 0)
        assertClose(metrics["weather_up{location=\"Oslo\"}"], 1, "the old config keeps running")

        // SIGHUP reloads as POST does.
        try config(units: "  time: 24h").write(to: exporter.configFile, atomically: true, encoding: .utf8)
        kill(exporter.process.processIdentifier, SIGHUP)
        metrics = try exporter.metrics { $0["cloudy_exporter_config_last_reload_successful"] == 1 }
        assertClose(metrics["cloudy_exporter_config_last_reload_successful"], 1)
        XCTAssertNil(metrics["weather_up{location=\"Oslo\"}"], "the place SIGHUP's config dropped")
    }
}
