import Foundation
import XCTest

@testable import Cloudy

/// The real binary with thresholds in its config: the series on `/metrics`, a reload with new
/// thresholds applied at once, a reload with a bad one refused (the old thresholds stay).
final class ThresholdsEndToEndTests: FakeWeatherTestCase {
    func config(alerts: String) -> String {
        """
        provider:
          url: \(fake.baseURL)
        refresh:
          interval: 1h
          timeout: 2s
        alerts:
          gust: "90 km/h"
        locations:
          - name: Greenhouse
            latitude: 52.52
            longitude: 13.41
            alerts: \(alerts)
          - name: Garden
            latitude: 51.5085
            longitude: -0.1257
        """
    }

    func testThresholdsAreSeriesAndAReloadChangesThemAtOnceOrNotAtAll() throws {
        let exporter = try ExporterProcess(config: config(alerts: "{ frost: \"37.4 °F\", heat: off }"))
        try exporter.waitFor("/readyz")
        var metrics = try exporter.metrics()
        let frost = "weather_alert_threshold_celsius{location=\"Greenhouse\",alert=\"frost\"}"
        let heat = "weather_alert_threshold_celsius{location=\"Greenhouse\",alert=\"heat\"}"
        assertClose(metrics[frost], 3)
        XCTAssertNil(metrics[heat], "heat: off has no series")
        assertClose(metrics["weather_alert_threshold_celsius{location=\"Garden\",alert=\"heat\"}"], 30)
        assertClose(metrics["weather_alert_threshold_meters_per_second{location=\"Garden\",alert=\"gust\"}"], 25)

        try config(alerts: "{ frost: \"-2 °C\" }").write(to: exporter.configFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try exporter.post("/-/reload").status, 200)
        metrics = try exporter.metrics()
        assertClose(metrics[frost], -2, "the new threshold is on the very next scrape")
        assertClose(metrics[heat], 30, "heat is back to the default")

        try config(alerts: "{ frost: \"28\" }").write(to: exporter.configFile, atomically: true, encoding: .utf8)
        let refused = try exporter.post("/-/reload")
        XCTAssertEqual(refused.status, 500)
        XCTAssertTrue(
            String(decoding: refused.body, as: UTF8.self).contains(
                "cloudy.yml:12: locations[0].alerts.frost: \"28\" has no unit"),
            String(decoding: refused.body, as: UTF8.self))
        metrics = try exporter.metrics()
        assertClose(metrics["cloudy_exporter_config_last_reload_successful"], 0)
        assertClose(metrics[frost], -2, "the old thresholds keep running")
    }
}
