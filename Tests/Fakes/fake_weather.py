#!/usr/bin/env python3
"""Local fake of the weather APIs Cloudy talks to, for its tests and benchmarks: the Open-Meteo
forecast, air-quality and geocoding APIs, OpenWeatherMap 2.5 (current weather, 5-day/3-hour
forecast, air pollution) and One Call 3.0, MET Norway Locationforecast 2.0 compact, the Dark
Sky API as Pirate Weather serves it, and the warnings of NWS, MET Norway (MetAlerts 2.0) and
DWD (through Bright Sky), all on one port.

Usage:
    python3 Tests/Fakes/fake_weather.py [--host 127.0.0.1] [--port 0] [--latency-ms 0]
                                        [--fixtures DIR] [--owm-key KEY] [--dark-sky-key KEY] [--quiet]

    --fixtures  directory holding open-meteo-forecast-multi.json and the fixtures of the other
                providers (openweathermap-current.json, openweathermap-forecast.json,
                openweathermap-error-401.json, openweathermap-onecall.json, met-no-compact.json,
                pirateweather-forecast.json, pirateweather-error-401.json,
                open-meteo-geocoding.json, open-meteo-geocoding-empty.json,
                open-meteo-air-quality.json, openweathermap-air-pollution.json); default:
                ../CloudyTests/Fixtures next to this script. A file DIR lacks is read from that
                default directory.
    --owm-key   the OpenWeatherMap key (appid) the fake accepts (default test-owm-key)
    --dark-sky-key  the Dark Sky key (in the path) the fake accepts (default test-dark-sky-key)
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
    air_quality.py     GET /v1/air-quality
    geocoding.py       GET /v1/search
    openweathermap.py  GET /data/2.5/weather, GET /data/2.5/forecast, GET /data/3.0/onecall,
                       GET /data/2.5/air_pollution
    met_norway.py      GET /weatherapi/locationforecast/2.0/compact
    dark_sky.py        GET /forecast/<key>/<lat>,<lon>
    nws_alerts.py      GET /alerts/active (NWS warnings)
    met_alerts.py      GET /weatherapi/metalerts/2.0/current.json (MET Norway warnings)
    brightsky.py       GET /alerts (DWD warnings through Bright Sky)
    warning_alerts.py  the warning services' active alerts, POST /-/warnings
    control.py         the control API under /-/ (reset, latency, override, owm, met, dark-sky,
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
