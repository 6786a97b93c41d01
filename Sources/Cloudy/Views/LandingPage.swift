/// The HTML page at `/`: what this is, links, and each place with its state and current weather.
/// Every text from the config or a provider goes through `HTML.escape`.
public enum LandingPage {
    public static func render(places: [StatusViewModel], telemetryPath: String, ready: String?) -> [UInt8] {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Cloudy exporter</title>
            <style>body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}
            td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}.up{color:#070}.down{color:#b00}.waiting{color:#777}</style>
            </head><body>
            <h1>Cloudy exporter</h1>
            <p>Prometheus exporter for weather, version \(HTML.escape(BuildInfo.version)).</p>
            <ul><li><a href="\(HTML.escape(telemetryPath))">Metrics</a></li><li><a href="/healthz">Health</a></li><li><a href="/readyz">Readiness</a></li></ul>
            <p>Readiness: \(HTML.escape(ready ?? "ready"))</p>
            <h2>Places</h2>
            <table><tr><th>Place</th><th>State</th><th>Temperature</th><th>Wind</th><th>Condition</th><th>Observed</th><th>Problem</th></tr>

            """
        for place in places {
            html += "<tr><td>\(HTML.escape(place.name))</td><td class=\"\(place.state)\">\(place.state)</td>"
            html += "<td>\(HTML.escape(place.temperature))</td><td>\(HTML.escape(place.wind))</td>"
            html += "<td>\(HTML.escape(place.condition))</td><td>\(HTML.escape(place.observedAt))</td>"
            html += "<td>\(HTML.escape(place.problem ?? ""))</td></tr>\n"
        }
        html += "</table>\n</body></html>\n"
        return Array(html.utf8)
    }
}

public enum HTML {
    public static func escape(_ text: String) -> String {
        text.escaped { scalar in
            switch scalar {
            case "&": return "&amp;"
            case "<": return "&lt;"
            case ">": return "&gt;"
            case "\"": return "&quot;"
            case "'": return "&#39;"
            default: return nil
            }
        }
    }
}
