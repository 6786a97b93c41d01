#!/usr/bin/env python3
"""Local fake of the weather APIs Cloudy talks to, for its tests and benchmarks: the Open-Meteo
forecast and geocoding APIs, OpenWeatherMap 2.5 (current weather, 5-day/3-hour forecast) and
One Call 3.0, MET Norway Locationforecast 2.0 compact, and the warnings of NWS, MET Norway
(MetAlerts 2.0) and DWD (through Bright Sky), all on one port.

Usage:
    python3 Tests/Fakes/fake_weather.py [--host 127.0.0.1] [--port 0] [--latency-ms 0]
                                        [--fixtures DIR] [--owm-key KEY] [--quiet]

    --fixtures  directory holding open-meteo-forecast-multi.json and the fixtures of the other
                providers (openweathermap-current.json, openweathermap-forecast.json,
                openweathermap-error-401.json, openweathermap-onecall.json, met-no-compact.json,
                open-meteo-geocoding.json, open-meteo-geocoding-empty.json); default:
                ../CloudyTests/Fixtures next to this script. A file DIR lacks is read from that
                default directory.
    --owm-key   the OpenWeatherMap key (appid) the fake accepts (default test-owm-key)
    --quiet     no per-request log lines on stderr (errors are still logged)

When ready it prints exactly one line, `listening HOST:PORT` (the real port when --port 0),
to stdout; everything else goes to stderr. SIGTERM or SIGINT stops it with exit status 0.
Python 3.11 standard library only; HTTP/1.1 keep-alive, one thread per connection.

Every weather endpoint is a "weather request": it is logged in /-/requests, waits /-/latency and
is subject to /-/fault. Bodies are gzipped when Accept-Encoding allows it. Other paths: 404
"Not Found" (not logged).

The reference is in the docstrings of the package weather_apis/ beside this file, one module
per API:
    open_meteo.py      GET /v1/forecast
    geocoding.py       GET /v1/search
    openweathermap.py  GET /data/2.5/weather, GET /data/2.5/forecast, GET /data/3.0/onecall
    met_norway.py      GET /weatherapi/locationforecast/2.0/compact
    nws_alerts.py      GET /alerts/active (NWS warnings)
    met_alerts.py      GET /weatherapi/metalerts/2.0/current.json (MET Norway warnings)
    brightsky.py       GET /alerts (DWD warnings through Bright Sky)
    warning_alerts.py  the warning services' active alerts, POST /-/warnings
    control.py         the control API under /-/ (reset, latency, override, owm, met,
                       geocoding, requests)
    faults.py          POST /-/fault and its modes
    server.py          HTTP, routing, latency and the request log; fixtures.py, protocol.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_apis.server import main  # noqa: E402

if __name__ == "__main__":
    main()
