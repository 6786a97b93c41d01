#!/usr/bin/env python3
"""Local fake of the weather APIs Cloudy talks to, for its tests and benchmarks: the Open-Meteo
forecast and geocoding APIs, OpenWeatherMap 2.5 (current weather, 5-day/3-hour forecast) and
MET Norway Locationforecast 2.0 compact, all on one port.

Usage:
    python3 Tests/Fakes/fake_weather.py [--host 127.0.0.1] [--port 0] [--latency-ms 0]
                                        [--fixtures DIR] [--owm-key KEY] [--quiet]

    --fixtures  directory holding open-meteo-forecast-multi.json and the fixtures of the other
                providers (openweathermap-current.json, openweathermap-forecast.json,
                openweathermap-error-401.json, met-no-compact.json, open-meteo-geocoding.json,
                open-meteo-geocoding-empty.json); default: ../CloudyTests/Fixtures next to this
                script. A file DIR lacks is read from that default directory.
    --owm-key   the OpenWeatherMap key (appid) the fake accepts (default test-owm-key)
    --quiet     no per-request log lines on stderr (errors are still logged)

When ready it prints exactly one line, `listening HOST:PORT` (the real port when --port 0),
to stdout; everything else goes to stderr. SIGTERM or SIGINT stops it with exit status 0.
Python 3.11 standard library only; HTTP/1.1 keep-alive, one thread per connection.

Every endpoint below is a "weather request": it is logged in /-/requests, waits /-/latency and
is subject to /-/fault. Bodies are gzipped when Accept-Encoding allows it. Other paths: 404
"Not Found" (not logged).

Weather endpoint, GET /v1/forecast (answers like api.open-meteo.com):
    latitude, longitude   comma lists of the same length (at most 1000, range-checked);
                          400 {"error":true,"reason":"..."} with the real API's texts otherwise
    current, hourly, daily  comma lists (repeating the parameter works too); only requested
                          sections and variables are returned, in request order. A variable
                          the fixture lacks comes back as null with unit "undefined".
    forecast_days, forecast_hours  truncate the daily (7 in the fixture) / hourly (24) arrays
    temperature_unit      celsius | fahrenheit (every "°C" value: F = C*9/5+32, no rounding)
    wind_speed_unit       kmh | ms | mph | kn (every "km/h" value ÷3.6, ÷1.609344, ÷1.852)
    timeformat            unixtime | iso8601 (default, local wall-clock strings like the API)
    timezone              one value or one per place; answers keep the fixture's zone
    Place i (0-based, request order) is the fixture entry multi[i % 3] (Berlin, London,
    New York) with the requested coordinates and "location_id": i for i >= 1. One place
    gives an object, several an array. Timestamps stay those of the fixture (2026-06-15).

Geocoding, GET /v1/search?name=&count=&language=&format=json[&countryCode=]
(answers like geocoding-api.open-meteo.com):
    The known places are the "results" of open-meteo-geocoding.json (three Springfields: MO,
    MA, IL) until POST /-/geocoding replaces them. `name` is split at its first comma:
      before the comma   matched against each place's "name", case- and diacritic-insensitive:
                         0-1 characters match nothing, 2 characters must equal the name, 3 or
                         more are a prefix of it; all digits also match an entry of "postcodes"
      after the comma    (optional, trimmed) must equal, case-insensitively, the place's
                         "country", "country_code", "admin1" or the admin1 abbreviation from
                         ADMIN1_ABBREVIATIONS (Missouri MO, Massachusetts MA, Illinois IL, ...)
    countryCode          keeps places whose "country_code" equals it (case-insensitive)
    count                1-100 (default 10) limits the results, else 400 {"error":true,
                         "reason":"Parameter count must be between 1 and 100."}
    format               json (default); anything else 400. language is accepted and ignored.
    Matches keep the stored order: {"results":[...],"generationtime_ms":0.9871721}. No match
    (or no name): the body of open-meteo-geocoding-empty.json, which has no "results" key.

OpenWeatherMap, GET /data/2.5/weather and GET /data/2.5/forecast (and GET /data/3.0/onecall:
openweathermap-onecall.json with the request's lat/lon, same key check, metric values only)
(?lat=&lon=&appid=&units=[&cnt=], answers like api.openweathermap.org):
    appid        must equal the accepted key (--owm-key, POST /-/owm {"key"}); missing or
                 different: 401 with the body of openweathermap-error-401.json ("cod": 401).
                 Checked first, before the coordinates.
    lat, lon     missing or empty: 400 {"cod":"400","message":"Nothing to geocode"} (string
                 cod); not a number or out of range: 400 {"cod":"400","message":"wrong
                 latitude"} / "wrong longitude".
    units        metric: the fixture values (°C, m/s). imperial: temperatures F = C*9/5+32,
                 wind m/s / 0.44704 (mph). standard, absent or anything else: K = C + 273.15,
                 m/s. Converted fields: main.temp, main.feels_like, main.temp_min,
                 main.temp_max, wind.speed, wind.gust; no rounding (compare with a
                 tolerance). Overrides are given in metric units and converted the same way.
    /weather     openweathermap-current.json with "coord" {"lon","lat"} = the request's
                 values rounded to 4 decimals and "timezone" = the OWM timezone (below);
                 "cod": 200 (a number).
    /forecast    {"cod":"200" (a string),"message":0,"cnt":N,"list":[N entries],"city":{...}}.
                 cnt: 1-40 keeps the first cnt entries; absent, 0, negative or > 40 gives 40;
                 not an integer: 400 {"cod":"400","message":"cnt is not a number"}.
                 city = the fixture's city with "coord" {"lat","lon"} from the request and
                 "timezone" = the OWM timezone; sunrise/sunset stay the fixture's.
      The 40 entries (before overrides and unit conversion) are, for i = 0..39, with
      b = fixture list[i % 4] and c = i // 4 (so entries 0-3 equal the fixture exactly):
        dt = 1781535600 + 10800*i; dt_txt = dt as UTC "YYYY-MM-DD HH:MM:SS"
        main.temp, feels_like, temp_min, temp_max = round(b + OWM_TEMP_SHIFT[c], 2) where
            OWM_TEMP_SHIFT = [0.0, -1.5, 1.0, -3.0, 2.0, -0.5, 3.5, -2.5, 1.5, -4.0]
        main.pressure, sea_level, grnd_level = b + c % 3; main.humidity = min(100, b + 2*c);
            main.temp_kf = b
        clouds.all = min(100, b + 2*c)
        wind.speed = round(b + 0.1*c, 2); wind.gust = round(b + 0.2*c, 2);
            wind.deg = (b + 5*c) % 360
        rain.3h = round(b + 0.5*c, 2), only in entries whose b has rain (i % 4 == 1; b = 3.5)
        weather, visibility, pop, sys.pod = b's
      The fixture city's timezone is 7200; tests group entries by local date dt + timezone.
    OWM timezone: the fixture's 7200 unless POST /-/owm {"timezone": -18000} set another
    offset (seconds, -43200..50400; null = back to the fixture's). It applies to "timezone" in
    /weather and "city.timezone" in /forecast, so a test can put a place across a day boundary.

MET Norway, GET /weatherapi/locationforecast/2.0/compact?lat=&lon=[&altitude=]
(answers like api.met.no):
    User-Agent   403 with a short HTML page unless it identifies the client: it must be
                 non-blank, must not start (case-insensitively) with curl/, python-requests,
                 Python-urllib, Go-http-client, Java/, okhttp or Dalvik, and must contain
                 contact info: an "@" anywhere, or a whitespace-separated token whose host part
                 (brackets and ;,"'+ trimmed, then an optional http(s):// dropped, up to the
                 first "/" or ":") looks like a domain: labels of [A-Za-z0-9-] joined by dots,
                 ending in a dot and 2+ letters. "cloudy/1.0 ops@example.org" and
                 "cloudy/1.0 github.com/acme/cloudy" and "cloudy/1.0 (+https://acme.example)"
                 pass; "curl/8.5.0", "cloudy/1.0" and "cloudy-tests" get 403. Checked first.
    lat, lon     required decimal numbers with at most 4 decimals, in range; altitude an
                 optional integer. Otherwise 400 with a short HTML page.
    Answer       200 (or the /-/met status) application/json: met-no-compact.json's
                 structure with geometry.coordinates = [lon, lat, altitude] from the request
                 (altitude absent: the fixture's 38), properties.meta as in the fixture
                 (updated_at "2026-06-15T11:47:12Z") and the generated timeseries below.
    Headers      Last-Modified: "Mon, 15 Jun 2026 12:18:55 GMT" unless /-/met set another;
                 Expires: the response's wall-clock time + 1800 s (or /-/met "expires_in") as
                 an HTTP date. Both on 200, 203 and 304 answers, not on 400/403 nor on
                 the status, empty, html, huge and hang faults.
    If-Modified-Since equal to the current Last-Modified, byte for byte: 304, no body, same
                 headers (checked after the User-Agent and the coordinates).
    Timeseries (before overrides): 89 steps. H = hours since 2026-06-15T12:00:00Z,
      u = the UTC hour of the step, d = UTC days since 2026-06-15 (0..10):
        hourly     H = 0..59 (to 2026-06-17T23:00Z): instant, next_12_hours, next_1_hours,
                   next_6_hours
        6-hourly   H = 60, 66, .., 222 (2026-06-18T00:00Z .. 2026-06-24T18:00Z, 28 steps):
                   instant, next_12_hours, next_6_hours
        final      H = 228 (2026-06-25T00:00Z): instant only
      instant.details (keys in this order):
        air_pressure_at_sea_level = (10146 + (3*H) % 21) / 10
        air_temperature           = round(MET_DAY_MEAN[d] + MET_DIURNAL[u], 1)
        cloud_area_fraction       = ((498 + 137*H) % 1000) / 10
        relative_humidity         = (427 + (11*H) % 450) / 10
        wind_from_direction       = ((2574 + 50*H) % 3600) / 10
        wind_speed                = (34 + (7*H) % 60) / 10
        MET_DAY_MEAN (d = 0..10) = [21.4, 19.0, 16.5, 17.6, 18.8, 15.2, 12.0, 6.5, -0.5, 14.0, 19.9]
        MET_DIURNAL (u = 0..23) = [-3.0, -3.6, -4.1, -4.5, -4.8, -4.4, -3.4, -2.2, -0.8, 0.6, 1.8,
            2.8, 3.4, 3.3, 3.5, 3.0, 2.6, 1.9, 1.0, 0.1, -0.8, -1.5, -2.1, -2.6]
      Hourly precipitation p(H) in mm is 0 except in MET_EVENTS (first hour, amounts per hour,
      symbol):
        H   3- 5  [2.1, 1.0, 0.4]                  rainshowers            (Jun 15 15-17Z)
        H  27-30  [0.5, 3.2, 1.8, 0.3]             rainshowersandthunder  (Jun 16 15-18Z)
        H  50-52  [0.2, 0.3, 0.1]                  lightrain              (Jun 17 14-16Z)
        H  78-83  [0.4, 0.6, 0.8, 0.6, 0.4, 0.2]   rain                   (Jun 18 18-23Z)
        H 120-125 [1.5, 2.5, 3.0, 2.0, 1.0, 0.5]   heavyrainshowers       (Jun 20 12-17Z)
        H 186-197 twelve times 0.5                 snow                   (Jun 23 06-17Z)
      next_N_hours (N = 1, 6, 12) covers hours H .. H+N-1: next_1_hours.details
        .precipitation_amount = p(H); next_6_hours.details.precipitation_amount =
        round(p(H) + .. + p(H+5), 1); next_12_hours.details = {} (as in compact).
        summary.symbol_code: the symbol of the first event with an hour inside the period;
        symbols with "showers" get "_day" when 4 <= u < 19, else "_night"; the others
        (lightrain, rain, snow) have no suffix. Dry periods use the step's cloud_area_fraction
        c: c < 15 clearsky_, c < 40 fair_, c < 75 partlycloudy_ (+ _day/_night), else cloudy.
      So a day's precipitation is the sum of p(H) over its hours, whether summed from
      next_1_hours (hourly part) or from next_6_hours at 00/06/12/18Z (6-hourly part). The
      first step equals the fixture's first step exactly, and the fixture's air temperatures
      recur at the fixture's six times.

Control endpoints (JSON bodies; never counted as weather requests):
    POST /-/reset     clear overrides, fault and request log; latency back to --latency-ms;
                      OWM key back to --owm-key and OWM timezone to the fixture's; /-/met
                      settings back to the defaults; geocoding places back to the fixture's
    POST /-/latency   {"ms": 100}  sleep before every weather answer
    POST /-/override  Overrides accumulate until /-/reset. "provider" picks the API:
      "open-meteo" (or no "provider"):
                      {"place": 1, "current": {"temperature_2m": -3.0},
                       "hourly": {"precipitation": [0.5, null]}, "daily": {"uv_index_max": 9}}
                      Values are in the API's default units (°C, km/h) and get converted like
                      fixture values. "place" absent/null = every place. Hourly/daily: a list
                      replaces the leading entries (extra ones are ignored), anything else
                      sets every entry.
      "openweathermap":
                      {"provider": "openweathermap", "current": {"main.temp": -3.0,
                       "rain.1h": 0.4}, "forecast": {"main.temp_min": [1.0, -2.0], "pop": 0}}
                      Keys are dotted paths into the /weather body ("current") or into each
                      /forecast list entry ("forecast"); a numeric part indexes a list
                      ("weather.0.id"). Missing objects on the way are created; a path through
                      a missing list index is skipped. In "forecast" a list gives entry i the
                      list's item i (leading entries only; entry index before cnt), anything
                      else goes to every entry. Values are metric (°C, m/s); null sets null.
      "met-norway":
                      {"provider": "met-norway", "instant": {"air_temperature": [-1.0, -2.5]},
                       "next_6_hours": {"precipitation_amount": 2.0, "symbol_code": "snow"}}
                      Sections instant, next_1_hours, next_6_hours, next_12_hours; a key goes
                      to that block's "details", except "symbol_code" which goes to its
                      "summary". A list gives step i (index in the whole timeseries) the
                      list's item i; anything else goes to every step. Steps without the block
                      are skipped. Derived values are not recomputed (overriding next_1_hours
                      leaves next_6_hours as it was).
    POST /-/fault     {"mode": M, ...options, "path": P, "count": n}; "count" limits the fault
                      to the next n weather requests it applies to; {"mode": "ok"} clears it.
                      "path" (optional) is a path prefix: the fault then applies only to weather
                      requests whose path starts with it (e.g. "/v1/search", "/data/2.5/",
                      "/weatherapi/"); without it, to every weather endpoint. Requests it does
                      not apply to are answered normally and do not spend the count. A fault
                      acts before any validation (key, User-Agent, coordinates). Modes:
        hang             read the request, never answer (until the client closes, max 10 min)
        slow             {"delay_ms": 200} correct headers, then the body one byte per delay
        status           {"status": 503, "body": ..., "retry_after": 30} that status. Default
                         body: 503 an nginx HTML page everywhere; otherwise Open-Meteo paths
                         the API's error JSON, OpenWeatherMap its {"cod":..,"message":..}
                         (401 the fixture, 404 "city not found", 429 the quota text),
                         MET Norway a short HTML page
        malformed_json   200 with the first half of the real JSON
        truncated        200 announcing the full Content-Length, half the body, then close
        empty            200 with an empty body
        html             200 text/html captive-portal page
        huge             {"bytes": 67108864} 200 streaming "[0,0,0,..." that never closes
      Open-Meteo forecast only (they apply to /v1/forecast and nothing else, whatever "path"
      says; a "path" that cannot match /v1/forecast is refused):
        nulls            every current/hourly/daily value null (times stay)
        missing_section  {"section": "current"|"hourly"|"daily", "place": i} section dropped
                         for that place (every place without "place")
        wrong_count      the array has one entry fewer than places requested ([] for one)
        bad_entry        {"place": 0} that entry becomes {"latitude":"north","current":[1,2]}
      (malformed_json, truncated and slow keep the endpoint's status and headers: a MET
      answer stays 203 in 203 mode, a 304 stays an empty 304.)
    POST /-/owm       {"key": "KEY", "timezone": -18000}  either or both: the accepted appid,
                      and the offset in seconds for /weather "timezone" and /forecast
                      "city.timezone" (null = the fixture's 7200)
    POST /-/met       {"last_modified": "...", "expires_in": 5, "status": 203}  any of them:
                      the Last-Modified value (any non-empty single-line text; null = the
                      default), Expires = response time + expires_in seconds (null = 1800),
                      and the status of successful answers, 200 or 203 (deprecated product)
    POST /-/geocoding {"results": [{"id": 2800866, "name": "Brussels", "latitude": 50.85045,
                      "longitude": 4.34878, "country_code": "BE", "country": "Belgium",
                      "admin1": "Brussels Capital"}, ...]}  replaces the known places (objects
                      need a string "name" and numeric "latitude"/"longitude"; other keys are
                      served as given); {"results": null} restores the fixture's
    GET /-/requests   {"count": N, "in_flight": I, "max_in_flight": M, "requests": [
                        {"path", "query": {name: value}, "headers": {lower-case name: value},
                         "time": epoch seconds}, ...]}  (the last 10000 weather requests of
                      every endpoint; max_in_flight = most served at once since the reset; a
                      request is in flight from its arrival until its answer's headers are
                      sent, so a client that sends the next request only after an answer is
                      never counted twice)
    Every POST answers {"ok": true, ...} with the new settings.
Bad control bodies get 400 {"error": "..."}.
"""

import argparse
import collections
import copy
import gzip
import json
import math
import re
import signal
import socketserver
import sys
import threading
import time
import unicodedata
from datetime import datetime, timedelta, timezone
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

FORECAST_PATH = "/v1/forecast"
GEOCODING_PATH = "/v1/search"
OWM_WEATHER_PATH = "/data/2.5/weather"
OWM_FORECAST_PATH = "/data/2.5/forecast"
OWM_ONECALL_PATH = "/data/3.0/onecall"
MET_PATH = "/weatherapi/locationforecast/2.0/compact"
FIXTURE_NAME = "open-meteo-forecast-multi.json"
OTHER_FIXTURES = {
    "owm_current": "openweathermap-current.json",
    "owm_forecast": "openweathermap-forecast.json",
    "owm_401": "openweathermap-error-401.json",
    "owm_onecall": "openweathermap-onecall.json",
    "met": "met-no-compact.json",
    "geocoding": "open-meteo-geocoding.json",
    "geocoding_empty": "open-meteo-geocoding-empty.json",
}
DEFAULT_FIXTURES = Path(__file__).absolute().parent.parent / "CloudyTests" / "Fixtures"
DEFAULT_OWM_KEY = "test-owm-key"
MAX_LOCATIONS = 1000
MAX_FORECAST_DAYS = 16
MAX_FORECAST_HOURS = 384
MAX_LOGGED_REQUESTS = 10_000
HANG_SECONDS = 600
SECTIONS = ("current", "hourly", "daily")
TOP_LEVEL_KEYS = ("generationtime_ms", "utc_offset_seconds", "timezone", "timezone_abbreviation", "elevation")

JSON_TYPE = "application/json; charset=utf-8"
HTML_TYPE = "text/html; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"

TEMPERATURE_UNITS = {"celsius": None, "fahrenheit": ("°F", lambda c: c * 9 / 5 + 32)}
WIND_SPEED_UNITS = {
    "kmh": None,
    "ms": ("m/s", lambda v: v / 3.6),
    "mph": ("mp/h", lambda v: v / 1.609344),
    "kn": ("kn", lambda v: v / 1.852),
}
TIME_FORMATS = ("iso8601", "unixtime")

OK_FAULT = {"mode": "ok"}
FAULT_OPTIONS = {
    "ok": set(), "hang": set(), "malformed_json": set(), "truncated": set(), "empty": set(),
    "html": set(), "nulls": set(), "wrong_count": set(),
    "slow": {"delay_ms"},
    "status": {"status", "body", "retry_after"},
    "huge": {"bytes"},
    "missing_section": {"section", "place"},
    "bad_entry": {"place"},
}
OPEN_METEO_ONLY_FAULTS = {"nulls", "missing_section", "wrong_count", "bad_entry"}
BAD_ENTRY = {"latitude": "north", "current": [1, 2]}
DEFAULT_ERROR_REASONS = {
    400: "Your API call requests too much data. Please reduce the number of variables, locations and/or weather models.",
    401: "API key required. Please add &apikey= to the URL.",
    429: "Minutely API request limit exceeded. Please try again in one minute.",
}
OVERLOADED_PAGE = (
    "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n"
    "<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)
CAPTIVE_PORTAL_PAGE = (
    "<!DOCTYPE html><html><head><title>Guest Wi-Fi</title></head><body>"
    "<h1>Welcome to Guest Wi-Fi</h1><p>Please accept the terms of use to continue.</p>"
    '<form method="post" action="/login"><input type="checkbox" name="accept"> I accept'
    '<button type="submit">Connect</button></form></body></html>'
)

# OpenWeatherMap
OWM_ENTRIES = 40
OWM_STEP_SECONDS = 10800
OWM_TEMP_SHIFT = [0.0, -1.5, 1.0, -3.0, 2.0, -0.5, 3.5, -2.5, 1.5, -4.0]
OWM_TEMPERATURE_FIELDS = (("main", "temp"), ("main", "feels_like"), ("main", "temp_min"), ("main", "temp_max"))
OWM_WIND_FIELDS = (("wind", "speed"), ("wind", "gust"))
OWM_ERROR_BODIES = {
    400: {"cod": "400", "message": "Nothing to geocode"},
    404: {"cod": "404", "message": "city not found"},
    429: {"cod": 429, "message": "Your account is temporary blocked due to exceeding of requests limitation of your "
                                 "subscription type. Please choose the proper subscription https://openweathermap.org/price"},
}

# MET Norway
MET_START = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
MET_HOURLY_STEPS = 60
MET_LAST_SIX_HOURLY = 222
MET_FINAL_STEP = 228
MET_DAY_MEAN = [21.4, 19.0, 16.5, 17.6, 18.8, 15.2, 12.0, 6.5, -0.5, 14.0, 19.9]
MET_DIURNAL = [-3.0, -3.6, -4.1, -4.5, -4.8, -4.4, -3.4, -2.2, -0.8, 0.6, 1.8,
               2.8, 3.4, 3.3, 3.5, 3.0, 2.6, 1.9, 1.0, 0.1, -0.8, -1.5, -2.1, -2.6]
MET_EVENTS = [
    (3, [2.1, 1.0, 0.4], "rainshowers"),
    (27, [0.5, 3.2, 1.8, 0.3], "rainshowersandthunder"),
    (50, [0.2, 0.3, 0.1], "lightrain"),
    (78, [0.4, 0.6, 0.8, 0.6, 0.4, 0.2], "rain"),
    (120, [1.5, 2.5, 3.0, 2.0, 1.0, 0.5], "heavyrainshowers"),
    (186, [0.5] * 12, "snow"),
]
MET_PERIODS = ("next_12_hours", "next_1_hours", "next_6_hours")  # the fixture's key order
MET_SECTIONS = ("instant", "next_1_hours", "next_6_hours", "next_12_hours")
MET_DEFAULT_LAST_MODIFIED = "Mon, 15 Jun 2026 12:18:55 GMT"
MET_DEFAULT_EXPIRES_IN = 1800
MET_STATUSES = (200, 203)
GENERIC_AGENTS = ("curl/", "python-requests", "python-urllib", "go-http-client", "java/", "okhttp", "dalvik")
DOMAIN = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
MET_COORDINATE = re.compile(r"^[+-]?\d+(\.\d+)?$")

# Open-Meteo geocoding
ADMIN1_ABBREVIATIONS = {
    "Missouri": "MO", "Massachusetts": "MA", "Illinois": "IL", "Ohio": "OH", "Oregon": "OR",
    "California": "CA", "New York": "NY", "Texas": "TX", "Florida": "FL", "Virginia": "VA",
}
PROVIDERS = ("open-meteo", "openweathermap", "met-norway")


def dumps(value):
    """Compact UTF-8 JSON, like the real server."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# --- Open-Meteo request parsing ------------------------------------------------------------


class BadRequest(Exception):
    """A request the real API refuses with 400 {"error":true,"reason":...}."""


class ForecastRequest:
    """The parts of a /v1/forecast query the fake acts on."""

    def __init__(self, query):
        self.coordinates = parse_coordinates(query)
        check_timezones(query.get("timezone", "GMT"), len(self.coordinates))
        requested = {section: comma_list(query.get(section, "")) for section in SECTIONS}
        self.variables = {section: names for section, names in requested.items() if names}
        self.limits = {
            "current": None,
            "hourly": parse_limit(query, "forecast_hours", MAX_FORECAST_HOURS),
            "daily": parse_limit(query, "forecast_days", MAX_FORECAST_DAYS),
        }
        temperature = choice(query, "temperature_unit", TEMPERATURE_UNITS, "celsius", "TemperatureUnit")
        wind_key = "wind_speed_unit" if "wind_speed_unit" in query else "windspeed_unit"
        wind = choice(query, wind_key, WIND_SPEED_UNITS, "kmh", "WindspeedUnit")
        self.conversions = {}
        if TEMPERATURE_UNITS[temperature]:
            self.conversions["°C"] = TEMPERATURE_UNITS[temperature]
        if WIND_SPEED_UNITS[wind]:
            self.conversions["km/h"] = WIND_SPEED_UNITS[wind]
        self.iso_times = choice(query, "timeformat", TIME_FORMATS, "iso8601", "Timeformat") == "iso8601"


def comma_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def corrupted(name, text, type_name):
    return BadRequest(f"Data corrupted at path '{name}'. Cannot initialize {type_name} from invalid String value {text}.")


def parse_coordinates(query):
    if "latitude" not in query or "longitude" not in query:
        missing = "latitude" if "latitude" not in query else "longitude"
        raise BadRequest(f"Value of type 'Float' required for key '{missing}'.")
    latitudes, longitudes = (parse_floats(query, name) for name in ("latitude", "longitude"))
    if len(latitudes) != len(longitudes):
        raise BadRequest("Parameter 'latitude' and 'longitude' must have the same number of elements")
    if len(latitudes) > MAX_LOCATIONS:
        raise BadRequest(f"Only up to {MAX_LOCATIONS} locations can be requested at once")
    for latitude, longitude in zip(latitudes, longitudes):
        if not -90 <= latitude <= 90:
            raise BadRequest(f"Latitude must be in range of -90 to 90°. Given: {latitude!r}.")
        if not -180 <= longitude <= 180:
            raise BadRequest(f"Longitude must be in range of -180 to 180°. Given: {longitude!r}.")
    return list(zip(latitudes, longitudes))


def parse_floats(query, name):
    values = []
    for text in query[name].split(","):
        try:
            values.append(float(text))
        except ValueError:
            raise corrupted(name, text, "Float") from None
    return values


def check_timezones(text, places):
    if len(text.split(",")) not in (1, places):
        raise BadRequest("Parameter 'latitude' and 'timezone' must have the same number of elements")


def parse_limit(query, name, maximum):
    if name not in query:
        return None
    try:
        value = int(query[name])
    except ValueError:
        raise corrupted(name, query[name], "Int") from None
    if not 0 <= value <= maximum:
        # The real message prints the maximum where the given value belongs (server quirk).
        raise BadRequest(f"Forecast days is invalid. Allowed range 0 to {maximum}. Given {maximum}.")
    return value


def choice(query, name, allowed, default, type_name):
    value = query.get(name, default)
    if value not in allowed:
        raise corrupted(name, value, type_name)
    return value


# --- Answer building ------------------------------------------------------------------------


def with_overrides(template, overrides):
    """A copy of `template` with the override sections applied (the template is shared)."""
    place = dict(template)
    for override in overrides:
        for section in SECTIONS:
            if override.get(section):
                place[section] = overridden_section(place[section], section, override[section])
    return place


def overridden_section(data, section, values):
    data = dict(data)
    for name, value in values.items():
        if section == "current":
            data[name] = value
            continue
        length = len(data["time"])
        if isinstance(value, list):
            series = list(data.get(name, [None] * length))
            count = min(len(value), length)
            series[:count] = value[:count]
        else:
            series = [value] * length
        data[name] = series
    return data


def render_place(template, index, latitude, longitude, request):
    entry = {"latitude": latitude, "longitude": longitude}
    entry.update((key, template[key]) for key in TOP_LEVEL_KEYS if key in template)
    if index > 0:
        entry["location_id"] = index
    offset = template.get("utc_offset_seconds", 0)
    for section, names in request.variables.items():
        entry[section + "_units"], entry[section] = render_section(template, section, names, request, offset)
    return entry


def render_section(template, section, names, request, offset):
    source_units, source = template[section + "_units"], template[section]
    keys = ["time", "interval", *names] if section == "current" else ["time", *names]
    limit = request.limits[section]
    units, data = {}, {}
    for key in keys:
        value = source.get(key, None if section == "current" else [None] * len(source["time"]))
        if limit is not None:
            value = value[:limit]
        unit = source_units.get(key, "undefined")
        units[key], data[key] = converted(unit, value, request, offset, date_only=(section, key) == ("daily", "time"))
    return units, data


def converted(unit, value, request, offset, date_only):
    """(unit, value) in the units the request asked for."""
    if unit == "unixtime" and request.iso_times:
        pattern = "%Y-%m-%d" if date_only else "%Y-%m-%dT%H:%M"
        return "iso8601", map_numbers(value, lambda t: local_time(t, offset, pattern))
    if unit in request.conversions:
        new_unit, convert = request.conversions[unit]
        return new_unit, map_numbers(value, convert)
    return unit, value


def map_numbers(value, function):
    def one(item):
        is_number = isinstance(item, (int, float)) and not isinstance(item, bool)
        return function(item) if is_number else item
    return [one(item) for item in value] if isinstance(value, list) else one(value)


def local_time(epoch, offset, pattern):
    return datetime.fromtimestamp(epoch + offset, timezone.utc).strftime(pattern)


def shaped_answer(entries, fault):
    """Applies the data-shaping fault modes; returns the JSON value to send."""
    mode, place = fault["mode"], fault.get("place")
    for index, entry in enumerate(entries):
        if mode == "nulls":
            null_values(entry)
        elif mode == "missing_section" and place in (None, index):
            entry.pop(fault["section"], None)
            entry.pop(fault["section"] + "_units", None)
    if mode == "bad_entry" and place < len(entries):
        entries[place] = BAD_ENTRY
    if mode == "wrong_count":
        return entries[:-1]
    return entries[0] if len(entries) == 1 else entries


def null_values(entry):
    for section in SECTIONS:
        data = entry.get(section, {})
        for key, value in data.items():
            if key not in ("time", "interval"):
                data[key] = [None] * len(value) if isinstance(value, list) else None


def forecast_answer(templates, query, fault, overrides):
    """(status, JSON bytes) for a /v1/forecast query."""
    try:
        request = ForecastRequest(query)
    except BadRequest as error:
        return 400, dumps({"error": True, "reason": str(error)})
    entries = []
    for index, (latitude, longitude) in enumerate(request.coordinates):
        mine = [o for o in overrides if o["place"] in (None, index)]
        template = with_overrides(templates[index % len(templates)], mine)
        entries.append(render_place(template, index, latitude, longitude, request))
    return 200, dumps(shaped_answer(entries, fault))


# --- Dotted-path overrides (OpenWeatherMap) -------------------------------------------------


def set_path(target, path, value):
    """Sets `value` at the dotted `path` inside `target`; numeric parts index lists. Missing
    objects are created; a missing list index (or a scalar in the way of a list) skips it."""
    parts = path.split(".")
    node = target
    for part in parts[:-1]:
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return
            node = node[int(part)]
            continue
        if not isinstance(node.get(part), (dict, list)):
            node[part] = {}
        node = node[part]
    last = parts[-1]
    if isinstance(node, list):
        if last.isdigit() and int(last) < len(node):
            node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value


# --- OpenWeatherMap -------------------------------------------------------------------------


class OwmError(Exception):
    """An OpenWeatherMap refusal: (status, JSON value or raw bytes)."""

    def __init__(self, status, body):
        super().__init__(status)
        self.status, self.body = status, body


def owm_forecast_list(fixture):
    """The 40 generated forecast entries in metric units (the module docstring's rule)."""
    bases = fixture["list"]
    first = bases[0]["dt"]
    entries = []
    for i in range(OWM_ENTRIES):
        base, c = bases[i % len(bases)], i // len(bases)
        entry = copy.deepcopy(base)
        entry["dt"] = first + OWM_STEP_SECONDS * i
        main, wind = entry["main"], entry["wind"]
        for key in ("temp", "feels_like", "temp_min", "temp_max"):
            main[key] = round(main[key] + OWM_TEMP_SHIFT[c % len(OWM_TEMP_SHIFT)], 2)
        for key in ("pressure", "sea_level", "grnd_level"):
            main[key] = main[key] + c % 3
        main["humidity"] = min(100, main["humidity"] + 2 * c)
        entry["clouds"]["all"] = min(100, entry["clouds"]["all"] + 2 * c)
        wind["speed"] = round(wind["speed"] + 0.1 * c, 2)
        wind["gust"] = round(wind["gust"] + 0.2 * c, 2)
        wind["deg"] = (wind["deg"] + 5 * c) % 360
        if "3h" in entry.get("rain", {}):
            entry["rain"]["3h"] = round(entry["rain"]["3h"] + 0.5 * c, 2)
        entry["dt_txt"] = datetime.fromtimestamp(entry["dt"], timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        entries.append(entry)
    return entries


def owm_check(query, settings, fixtures):
    """(lat, lon, conversions) for a valid OpenWeatherMap query; raises OwmError otherwise."""
    if query.get("appid") != settings["owm_key"]:
        raise OwmError(401, fixtures.owm_401_bytes)
    if not query.get("lat") or not query.get("lon"):
        raise OwmError(400, {"cod": "400", "message": "Nothing to geocode"})
    coordinates = []
    for name, word, limit in (("lat", "latitude", 90), ("lon", "longitude", 180)):
        try:
            value = float(query[name])
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and -limit <= value <= limit):
            raise OwmError(400, {"cod": "400", "message": f"wrong {word}"})
        coordinates.append(round(value, 4))
    units = query.get("units", "standard")
    if units == "metric":
        conversions = None
    elif units == "imperial":
        conversions = (lambda c: c * 9 / 5 + 32, lambda v: v / 0.44704)
    else:
        conversions = (lambda c: c + 273.15, None)
    return coordinates[0], coordinates[1], conversions


def owm_convert(entry, conversions):
    if conversions is None:
        return
    for fields, convert in ((OWM_TEMPERATURE_FIELDS, conversions[0]), (OWM_WIND_FIELDS, conversions[1])):
        if convert is None:
            continue
        for group, key in fields:
            value = entry.get(group, {}).get(key) if isinstance(entry.get(group), dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                entry[group][key] = convert(value)


def owm_timezone(settings, fixture_value):
    return fixture_value if settings["owm_timezone"] is None else settings["owm_timezone"]


def owm_weather_answer(fixtures, query, settings):
    """(status, JSON bytes) for /data/2.5/weather."""
    try:
        lat, lon, conversions = owm_check(query, settings, fixtures)
    except OwmError as error:
        return error.status, error.body if isinstance(error.body, bytes) else dumps(error.body)
    body = copy.deepcopy(fixtures.owm_current)
    body["coord"] = {"lon": lon, "lat": lat}
    body["timezone"] = owm_timezone(settings, body.get("timezone"))
    for override in settings["owm_overrides"]:
        for path, value in override["current"].items():
            set_path(body, path, value)
    owm_convert(body, conversions)
    return 200, dumps(body)


def owm_forecast_answer(fixtures, query, settings):
    """(status, JSON bytes) for /data/2.5/forecast."""
    try:
        lat, lon, conversions = owm_check(query, settings, fixtures)
        count = OWM_ENTRIES
        if query.get("cnt"):
            try:
                count = int(query["cnt"])
            except ValueError:
                raise OwmError(400, {"cod": "400", "message": "cnt is not a number"}) from None
            if not 1 <= count <= OWM_ENTRIES:
                count = OWM_ENTRIES
    except OwmError as error:
        return error.status, error.body if isinstance(error.body, bytes) else dumps(error.body)
    entries = copy.deepcopy(fixtures.owm_list)
    for override in settings["owm_overrides"]:
        for path, value in override["forecast"].items():
            if isinstance(value, list):
                for entry, item in zip(entries, value):
                    set_path(entry, path, item)
            else:
                for entry in entries:
                    set_path(entry, path, copy.deepcopy(value))
    entries = entries[:count]
    for entry in entries:
        owm_convert(entry, conversions)
    city = copy.deepcopy(fixtures.owm_forecast["city"])
    city["coord"] = {"lat": lat, "lon": lon}
    city["timezone"] = owm_timezone(settings, city.get("timezone"))
    body = {"cod": "200", "message": 0, "cnt": len(entries), "list": entries, "city": city}
    return 200, dumps(body)


def owm_status_body(status, fixtures):
    """The default body of a `status` fault on an OpenWeatherMap path."""
    if status == 401:
        return fixtures.owm_401_bytes
    reason = BaseHTTPRequestHandler.responses.get(status, ("Error",))[0]
    return dumps(OWM_ERROR_BODIES.get(status, {"cod": status, "message": reason.lower()}))


# --- MET Norway -----------------------------------------------------------------------------


def met_hours():
    """H (hours since MET_START) of every step, and what each step carries."""
    steps = [(h, MET_PERIODS) for h in range(MET_HOURLY_STEPS)]
    steps += [(h, ("next_12_hours", "next_6_hours")) for h in range(MET_HOURLY_STEPS, MET_LAST_SIX_HOURLY + 1, 6)]
    steps.append((MET_FINAL_STEP, ()))
    return steps


def met_precipitation(hour):
    for start, amounts, _ in MET_EVENTS:
        if start <= hour < start + len(amounts):
            return amounts[hour - start]
    return 0.0


def met_cloud(hour):
    return ((498 + 137 * hour) % 1000) / 10


def met_symbol(hour, hours):
    """The symbol_code of the period [hour, hour + hours)."""
    utc_hour = (MET_START + timedelta(hours=hour)).hour
    suffix = "_day" if 4 <= utc_hour < 19 else "_night"
    for start, amounts, symbol in MET_EVENTS:
        if start < hour + hours and hour < start + len(amounts):
            return symbol + suffix if "showers" in symbol else symbol
    cloud = met_cloud(hour)
    if cloud >= 75:
        return "cloudy"
    name = "clearsky" if cloud < 15 else "fair" if cloud < 40 else "partlycloudy"
    return name + suffix


def met_timeseries():
    """The generated timeseries (the module docstring's rule), before overrides."""
    series = []
    for hour, periods in met_hours():
        moment = MET_START + timedelta(hours=hour)
        day = (moment.date() - MET_START.date()).days
        details = {
            "air_pressure_at_sea_level": (10146 + (3 * hour) % 21) / 10,
            "air_temperature": round(MET_DAY_MEAN[day] + MET_DIURNAL[moment.hour], 1),
            "cloud_area_fraction": met_cloud(hour),
            "relative_humidity": (427 + (11 * hour) % 450) / 10,
            "wind_from_direction": ((2574 + 50 * hour) % 3600) / 10,
            "wind_speed": (34 + (7 * hour) % 60) / 10,
        }
        data = {"instant": {"details": details}}
        for period in periods:
            hours = int(period.split("_")[1])
            if hours == 12:
                period_details = {}
            else:
                total = sum(met_precipitation(hour + k) for k in range(hours))
                period_details = {"precipitation_amount": round(total, 1)}
            data[period] = {"summary": {"symbol_code": met_symbol(hour, hours)}, "details": period_details}
        series.append({"time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"), "data": data})
    return series


def identifying_agent(agent):
    """True when a User-Agent passes MET Norway's identification rule (module docstring)."""
    agent = agent.strip()
    if not agent or agent.lower().startswith(GENERIC_AGENTS):
        return False
    if "@" in agent:
        return True
    for token in agent.split():
        token = re.sub(r"^https?://", "", token.strip("()<>[];,\"'+"), flags=re.IGNORECASE)
        host = re.split(r"[/:]", token, maxsplit=1)[0]
        if DOMAIN.match(host):
            return True
    return False


def met_page(status, message):
    reason = BaseHTTPRequestHandler.responses.get(status, ("Error",))[0]
    return (f"<html><head><title>{status} {reason}</title></head><body><h1>{status} {reason}</h1>"
            f"<p>{message}</p></body></html>\n").encode()


def met_coordinates(query, default_altitude):
    """[lon, lat, altitude] for a valid query; raises BadRequest otherwise."""
    values = {}
    for name, limit in (("lat", 90), ("lon", 180)):
        text = query.get(name, "")
        if not text:
            raise BadRequest(f"Missing parameter '{name}'.")
        if not MET_COORDINATE.match(text):
            raise BadRequest(f"Parameter '{name}' is not a number: {text}")
        if len(text.partition(".")[2]) > 4:
            raise BadRequest(f"Parameter '{name}' has more than 4 decimals: {text}")
        values[name] = float(text)
        if not -limit <= values[name] <= limit:
            raise BadRequest(f"Parameter '{name}' is out of range: {text}")
    altitude = default_altitude
    if query.get("altitude"):
        if not re.match(r"^[+-]?\d+$", query["altitude"]):
            raise BadRequest(f"Parameter 'altitude' must be an integer: {query['altitude']}")
        altitude = int(query["altitude"])
    return [values["lon"], values["lat"], altitude]


def met_apply_overrides(series, overrides):
    for override in overrides:
        for section in MET_SECTIONS:
            for name, value in override[section].items():
                for index, step in enumerate(series):
                    if isinstance(value, list) and index >= len(value):
                        break
                    block = step["data"].get(section)
                    if block is None:
                        continue
                    item = copy.deepcopy(value[index] if isinstance(value, list) else value)
                    if name == "symbol_code" and section != "instant":
                        block.setdefault("summary", {})["symbol_code"] = item
                    else:
                        block.setdefault("details", {})[name] = item


def met_answer(fixtures, request, settings):
    """(status, content type, bytes, headers) for the MET Norway compact endpoint."""
    if not identifying_agent(request.headers.get("user-agent", "")):
        message = ("Identify your application with a User-Agent naming it and giving contact information "
                   "(see https://api.met.no/doc/TermsOfService).")
        return 403, HTML_TYPE, met_page(403, message), []
    try:
        coordinates = met_coordinates(request.query, fixtures.met["geometry"]["coordinates"][2])
    except BadRequest as error:
        return 400, HTML_TYPE, met_page(400, str(error)), []
    last_modified = settings["met_last_modified"]
    headers = [("Last-Modified", last_modified),
               ("Expires", formatdate(time.time() + settings["met_expires_in"], usegmt=True))]
    if request.headers.get("if-modified-since") == last_modified:
        return 304, None, b"", headers
    document = copy.deepcopy(fixtures.met_document)
    document["geometry"]["coordinates"] = coordinates
    if settings["met_overrides"]:
        met_apply_overrides(document["properties"]["timeseries"], settings["met_overrides"])
    return settings["met_status"], JSON_TYPE, dumps(document), headers


# --- Open-Meteo geocoding -------------------------------------------------------------------


def folded(text):
    """Lower-case text without diacritics, for the geocoder's comparisons."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().strip()


def geocoding_matches(place, name, qualifier):
    place_name = folded(place.get("name", ""))
    if len(name) < 2:
        matched = False
    elif len(name) == 2:
        matched = place_name == name
    else:
        matched = place_name.startswith(name)
    if not matched and name.isdigit():
        matched = name in (str(code) for code in place.get("postcodes", []))
    if not matched:
        return False
    if not qualifier:
        return True
    admin1 = place.get("admin1", "")
    candidates = (place.get("country"), place.get("country_code"), admin1, ADMIN1_ABBREVIATIONS.get(admin1))
    return qualifier in {folded(c) for c in candidates if c}


def geocoding_answer(fixtures, query, places):
    """(status, JSON bytes) for /v1/search."""
    try:
        count = 10
        if "count" in query:
            try:
                count = int(query["count"])
            except ValueError:
                raise corrupted("count", query["count"], "Int") from None
            if not 1 <= count <= 100:
                raise BadRequest("Parameter count must be between 1 and 100.")
        form = query.get("format", "json")
        if form != "json":
            raise BadRequest(f"The fake geocoder only serves format=json, not {form!r}.")
    except BadRequest as error:
        return 400, dumps({"error": True, "reason": str(error)})
    name, _, qualifier = query.get("name", "").partition(",")
    name, qualifier = folded(name), folded(qualifier)
    country = folded(query.get("countryCode", ""))
    results = [place for place in places
               if geocoding_matches(place, name, qualifier)
               and (not country or folded(place.get("country_code", "")) == country)]
    if not results:
        return 200, dumps(fixtures.geocoding_empty)
    body = {"results": results[:count]}
    body.update((key, value) for key, value in fixtures.geocoding.items() if key != "results")
    return 200, dumps(body)


# --- Control bodies -------------------------------------------------------------------------


def number(body, key, default=None, minimum=0, integer=True):
    value = body.get(key, default)
    kinds = int if integer else (int, float)
    if not isinstance(value, kinds) or isinstance(value, bool) or value < minimum:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"'{key}' must be {kind} >= {minimum}, got {value!r}")
    return value


def parse_latency(body):
    return number(body, "ms", integer=False)


def parse_override(body):
    """(provider, override) for a /-/override body."""
    body = dict(body)
    provider = body.pop("provider", None) or "open-meteo"
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; one of {', '.join(PROVIDERS)}")
    if provider == "openweathermap":
        return provider, parse_sections(body, ("current", "forecast"), dotted=True)
    if provider == "met-norway":
        return provider, parse_sections(body, MET_SECTIONS, dotted=False)
    unknown = set(body) - {"place", *SECTIONS}
    if unknown:
        raise ValueError(f"unknown override keys {sorted(unknown)}; allowed: place, current, hourly, daily")
    override = {"place": None if body.get("place") is None else number(body, "place")}
    for section in SECTIONS:
        values = body.get(section, {})
        if not isinstance(values, dict):
            raise ValueError(f"'{section}' must be an object of variable -> value")
        override[section] = values
    return provider, override


def parse_sections(body, sections, dotted):
    unknown = set(body) - set(sections)
    if unknown:
        raise ValueError(f"unknown override keys {sorted(unknown)}; allowed: provider, {', '.join(sections)}")
    override = {}
    for section in sections:
        values = body.get(section) or {}
        if not isinstance(values, dict):
            kind = "dotted path" if dotted else "variable"
            raise ValueError(f"'{section}' must be an object of {kind} -> value")
        for key in values:
            if not key or (dotted and "" in key.split(".")):
                raise ValueError(f"bad key {key!r} in '{section}'")
        override[section] = values
    return override


def parse_fault(body):
    """(fault, count): the fault dict with its options filled in, and the request budget."""
    mode = body.get("mode")
    if mode not in FAULT_OPTIONS:
        raise ValueError(f"unknown fault mode {mode!r}; one of {', '.join(FAULT_OPTIONS)}")
    allowed = FAULT_OPTIONS[mode] | ({"path"} if mode != "ok" else set())
    unknown = set(body) - allowed - {"mode", "count"}
    if unknown:
        raise ValueError(f"options {sorted(unknown)} do not apply to mode {mode!r}")
    fault = {"mode": mode}
    if mode == "slow":
        fault["delay_ms"] = number(body, "delay_ms", 200, integer=False)
    elif mode == "status":
        fault["status"] = number(body, "status", minimum=200)
        if fault["status"] > 599:
            raise ValueError("'status' must be at most 599")
        fault.update((key, body[key]) for key in ("body", "retry_after") if body.get(key) is not None)
    elif mode == "huge":
        fault["bytes"] = number(body, "bytes", 64 * 1024 * 1024, minimum=1)
    elif mode == "missing_section":
        if body.get("section") not in SECTIONS:
            raise ValueError(f"'section' must be one of {', '.join(SECTIONS)}")
        fault["section"] = body["section"]
        if body.get("place") is not None:
            fault["place"] = number(body, "place")
    elif mode == "bad_entry":
        fault["place"] = number(body, "place", 0)
    if body.get("path") is not None:
        path = body["path"]
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"'path' must be a path prefix starting with '/', got {path!r}")
        if mode in OPEN_METEO_ONLY_FAULTS and not FORECAST_PATH.startswith(path):
            raise ValueError(f"mode {mode!r} applies to {FORECAST_PATH} only; 'path' {path!r} cannot match it")
        fault["path"] = path
    count = None if body.get("count") is None else number(body, "count", minimum=1)
    return fault, count


def fault_applies(fault, path):
    """True when `fault` acts on a weather request for `path`."""
    if fault.get("path") is not None and not path.startswith(fault["path"]):
        return False
    return fault["mode"] not in OPEN_METEO_ONLY_FAULTS or path == FORECAST_PATH


def parse_owm(body):
    """The /-/owm settings to change."""
    unknown = set(body) - {"key", "timezone"}
    if unknown or not body:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: key, timezone" if unknown else "give key and/or timezone")
    changes = {}
    if "key" in body:
        if not isinstance(body["key"], str) or not body["key"]:
            raise ValueError(f"'key' must be a non-empty string, got {body['key']!r}")
        changes["owm_key"] = body["key"]
    if "timezone" in body:
        value = body["timezone"]
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not -43200 <= value <= 50400):
            raise ValueError(f"'timezone' must be an integer offset in seconds (-43200..50400) or null, got {value!r}")
        changes["owm_timezone"] = value
    return changes


def parse_met(body):
    """The /-/met settings to change."""
    unknown = set(body) - {"last_modified", "expires_in", "status"}
    if unknown or not body:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: last_modified, expires_in, status" if unknown
                         else "give last_modified, expires_in and/or status")
    changes = {}
    if "last_modified" in body:
        value = body["last_modified"]
        if value is None:
            value = MET_DEFAULT_LAST_MODIFIED
        if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 for c in value):
            raise ValueError(f"'last_modified' must be non-empty single-line text or null, got {value!r}")
        changes["met_last_modified"] = value
    if "expires_in" in body:
        changes["met_expires_in"] = (MET_DEFAULT_EXPIRES_IN if body["expires_in"] is None
                                     else number(body, "expires_in", integer=False))
    if "status" in body:
        status = 200 if body["status"] is None else body["status"]
        if status not in MET_STATUSES or isinstance(status, bool):
            raise ValueError(f"'status' must be 200 or 203, got {status!r}")
        changes["met_status"] = status
    return changes


def parse_geocoding(body, default_places):
    unknown = set(body) - {"results"}
    if unknown or "results" not in body:
        raise ValueError("body must be {\"results\": [place, ...]} (or null for the fixture's places)")
    places = body["results"]
    if places is None:
        return default_places
    if not isinstance(places, list):
        raise ValueError("'results' must be a list of place objects or null")
    for index, place in enumerate(places):
        numbers_ok = isinstance(place, dict) and all(
            isinstance(place.get(key), (int, float)) and not isinstance(place.get(key), bool)
            for key in ("latitude", "longitude"))
        if not numbers_ok or not isinstance(place.get("name"), str):
            raise ValueError(f"results[{index}] needs a string 'name' and numeric 'latitude' and 'longitude'")
    return tuple(places)


def status_fault_body(fault):
    """(content type, bytes) for the `status` fault mode."""
    status, body = fault["status"], fault.get("body")
    if body is None and status == 503:
        return HTML_TYPE, OVERLOADED_PAGE.encode()
    if body is None:
        reason = DEFAULT_ERROR_REASONS.get(status) or BaseHTTPRequestHandler.responses.get(status, ("Error",))[0]
        return JSON_TYPE, dumps({"error": True, "reason": reason})
    if not isinstance(body, str):
        return JSON_TYPE, dumps(body)
    if body.lstrip().startswith("<"):
        return HTML_TYPE, body.encode()
    try:
        json.loads(body)
        return JSON_TYPE, body.encode()
    except ValueError:
        return TEXT_TYPE, body.encode()


def provider_status_fault_body(fault, path, fixtures):
    """(content type, bytes) for the `status` fault mode on any weather path."""
    if fault.get("body") is not None or fault["status"] == 503 or not path.startswith(("/data/", "/weatherapi/")):
        return status_fault_body(fault)
    if path.startswith("/data/"):
        return JSON_TYPE, owm_status_body(fault["status"], fixtures)
    return HTML_TYPE, met_page(fault["status"], "The fake's status fault.")


# --- Shared state ---------------------------------------------------------------------------


class Job:
    """What one weather request runs with, fixed when it arrives."""

    def __init__(self, fault, latency_ms, overrides, settings=None):
        self.fault, self.latency_ms, self.overrides = fault, latency_ms, overrides
        self.settings = settings or {}


class State:
    """Overrides, fault, latency, provider settings and the request log; every access holds `lock`."""

    def __init__(self, latency_ms, owm_key=DEFAULT_OWM_KEY, places=()):
        self.lock = threading.Lock()
        self.default_latency_ms = latency_ms
        self.default_owm_key = owm_key
        self.default_places = tuple(places)
        self.in_flight = 0
        self.reset({})

    def reset(self, _body):
        with self.lock:
            self.latency_ms = self.default_latency_ms
            self.overrides = ()
            self.fault, self.fault_budget = OK_FAULT, None
            self.count = 0
            self.requests = collections.deque(maxlen=MAX_LOGGED_REQUESTS)
            self.max_in_flight = self.in_flight
            self.settings = {
                "owm_key": self.default_owm_key, "owm_timezone": None, "owm_overrides": (),
                "met_last_modified": MET_DEFAULT_LAST_MODIFIED, "met_expires_in": MET_DEFAULT_EXPIRES_IN,
                "met_status": 200, "met_overrides": (), "places": self.default_places,
            }
        return {"ok": True}

    def set_latency(self, body):
        ms = parse_latency(body)
        with self.lock:
            self.latency_ms = ms
        return {"ok": True, "ms": ms}

    def add_override(self, body):
        provider, override = parse_override(body)
        with self.lock:
            if provider == "open-meteo":
                self.overrides += (override,)
                return {"ok": True, "overrides": len(self.overrides)}
            key = "owm_overrides" if provider == "openweathermap" else "met_overrides"
            self.settings = {**self.settings, key: self.settings[key] + (override,)}
            return {"ok": True, "provider": provider, "overrides": len(self.settings[key])}

    def set_fault(self, body):
        fault, count = parse_fault(body)
        with self.lock:
            self.fault, self.fault_budget = fault, count
        return {"ok": True, "fault": fault, "count": count}

    def change_settings(self, changes):
        with self.lock:
            self.settings = {**self.settings, **changes}
            return self.settings

    def set_owm(self, body):
        settings = self.change_settings(parse_owm(body))
        return {"ok": True, "key": settings["owm_key"], "timezone": settings["owm_timezone"]}

    def set_met(self, body):
        settings = self.change_settings(parse_met(body))
        return {"ok": True, "last_modified": settings["met_last_modified"],
                "expires_in": settings["met_expires_in"], "status": settings["met_status"]}

    def set_geocoding(self, body):
        settings = self.change_settings({"places": parse_geocoding(body, self.default_places)})
        return {"ok": True, "places": len(settings["places"])}

    def begin(self, record):
        """Logs a weather request, counts it in flight and hands out (and spends) the fault
        when it applies to the request's path."""
        with self.lock:
            self.count += 1
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            applies = fault_applies(self.fault, record["path"])
            job = Job(self.fault if applies else OK_FAULT, self.latency_ms, self.overrides, self.settings)
            if applies and self.fault_budget is not None:
                self.fault_budget -= 1
                if self.fault_budget == 0:
                    self.fault, self.fault_budget = OK_FAULT, None
            return job

    def end(self):
        with self.lock:
            self.in_flight -= 1

    def report(self):
        with self.lock:
            return {"count": self.count, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                    "requests": list(self.requests)}


CONTROL_POSTS = {
    "/-/reset": State.reset,
    "/-/latency": State.set_latency,
    "/-/override": State.add_override,
    "/-/fault": State.set_fault,
    "/-/owm": State.set_owm,
    "/-/met": State.set_met,
    "/-/geocoding": State.set_geocoding,
}


# --- Weather endpoints ----------------------------------------------------------------------


class WeatherRequest:
    """One weather request as the endpoints see it."""

    def __init__(self, path, query, headers, job):
        self.path, self.query, self.headers, self.job = path, query, headers, job


def forecast_endpoint(fixtures, request):
    status, body = forecast_answer(fixtures.templates, request.query, request.job.fault, request.job.overrides)
    return status, JSON_TYPE, body, []


def geocoding_endpoint(fixtures, request):
    status, body = geocoding_answer(fixtures, request.query, request.job.settings["places"])
    return status, JSON_TYPE, body, []


def owm_weather_endpoint(fixtures, request):
    status, body = owm_weather_answer(fixtures, request.query, request.job.settings)
    return status, JSON_TYPE, body, []


def owm_onecall_endpoint(fixtures, request):
    """One Call 3.0: openweathermap-onecall.json with the request's lat/lon (metric only)."""
    try:
        lat, lon, _ = owm_check(request.query, request.job.settings, fixtures)
    except OwmError as error:
        return error.status, JSON_TYPE, error.body if isinstance(error.body, bytes) else dumps(error.body), []
    body = copy.deepcopy(fixtures.owm_onecall)
    body["lat"], body["lon"] = lat, lon
    return 200, JSON_TYPE, dumps(body), []


def owm_forecast_endpoint(fixtures, request):
    status, body = owm_forecast_answer(fixtures, request.query, request.job.settings)
    return status, JSON_TYPE, body, []


def met_endpoint(fixtures, request):
    return met_answer(fixtures, request, request.job.settings)


WEATHER_ENDPOINTS = {
    FORECAST_PATH: forecast_endpoint,
    GEOCODING_PATH: geocoding_endpoint,
    OWM_WEATHER_PATH: owm_weather_endpoint,
    OWM_FORECAST_PATH: owm_forecast_endpoint,
    OWM_ONECALL_PATH: owm_onecall_endpoint,
    MET_PATH: met_endpoint,
}


# --- HTTP -----------------------------------------------------------------------------------


def accepts_gzip(header):
    """True when Accept-Encoding lists gzip (or *) without q=0."""
    for item in header.split(","):
        coding, *parameters = (part.strip().lower() for part in item.split(";"))
        if coding not in ("gzip", "x-gzip", "*"):
            continue
        qualities = [parameter[2:] for parameter in parameters if parameter.startswith("q=")]
        try:
            return not qualities or float(qualities[0]) > 0
        except ValueError:
            return False
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-open-meteo"
    disable_nagle_algorithm = True

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path in WEATHER_ENDPOINTS:
            self.serve_weather(url, WEATHER_ENDPOINTS[url.path])
        elif url.path == "/-/requests":
            self.send_json(200, self.server.state.report())
        elif url.path in CONTROL_POSTS:
            self.send_plain(405, "Method Not Allowed")
        else:
            self.send_plain(404, "Not Found")

    def do_POST(self):
        try:
            body = self.read_json_body()  # read first, so keep-alive stays in step
        except ValueError as error:
            self.close_connection = True
            return self.send_json(400, {"error": str(error)})
        action = CONTROL_POSTS.get(urlsplit(self.path).path)
        if action is None:
            return self.send_plain(404, "Not Found")
        try:
            self.send_json(200, action(self.server.state, body))
        except ValueError as error:
            self.send_json(400, {"error": str(error)})

    def read_json_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise ValueError("send the body with Content-Length, not chunked")
        length = int(self.headers.get("Content-Length") or 0)
        text = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(text) if text.strip() else {}
        except ValueError as error:
            raise ValueError(f"body is not JSON: {error}") from None
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return body

    # Weather requests

    def serve_weather(self, url, endpoint):
        query = {name: ",".join(values) for name, values in parse_qs(url.query, keep_blank_values=True).items()}
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = {"path": url.path, "query": query, "headers": headers, "time": time.time()}
        state = self.server.state
        job = state.begin(record)
        self.answering = True  # end_headers ends it: the client cannot have the answer before
        try:
            time.sleep(job.latency_ms / 1000)
            self.answer_weather(endpoint, WeatherRequest(url.path, query, headers, job))
        finally:
            self.end_answer()  # no headers sent (hang, error)

    def end_answer(self):
        if getattr(self, "answering", False):
            self.answering = False
            self.server.state.end()

    def end_headers(self):
        # Counted out of flight before the headers leave: a sequential client's next request
        # then never meets this one still counted (as it did when end() ran after the body).
        self.end_answer()
        super().end_headers()

    def answer_weather(self, endpoint, request):
        fault = request.job.fault
        mode = fault["mode"]
        if mode == "hang":
            return self.hang()
        if mode == "huge":
            return self.stream_huge(fault["bytes"])
        if mode == "status":
            content_type, body = provider_status_fault_body(fault, request.path, self.server.fixtures)
            extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
            return self.send_body(fault["status"], content_type, body, extra)
        if mode == "empty":
            return self.send_body(200, JSON_TYPE, b"")
        if mode == "html":
            return self.send_body(200, HTML_TYPE, CAPTIVE_PORTAL_PAGE.encode())
        status, content_type, body, extra = endpoint(self.server.fixtures, request)
        if status == 304:
            return self.send_not_modified(extra)
        if mode == "malformed_json":
            body = body[: len(body) // 2]
        body, encoding = self.encoded(body)
        headers = [*extra, *encoding]
        if mode == "truncated":
            self.close_connection = True
            self.send_head(status, content_type, len(body), headers)
            self.wfile.write(body[: len(body) // 2])
        elif mode == "slow":
            self.send_head(status, content_type, len(body), headers)
            for index in range(len(body)):
                if index:
                    time.sleep(fault["delay_ms"] / 1000)
                self.wfile.write(body[index:index + 1])
        else:
            self.send_head(status, content_type, len(body), headers)
            self.wfile.write(body)

    def send_not_modified(self, headers):
        """304: the headers, no Content-Type and no body."""
        self.send_response(304)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def hang(self):
        """Answers nothing; returns when the client closes or HANG_SECONDS pass."""
        self.close_connection = True
        deadline = time.monotonic() + HANG_SECONDS
        while (remaining := deadline - time.monotonic()) > 0:
            self.connection.settimeout(remaining)
            try:
                if not self.connection.recv(65536):
                    return
            except (TimeoutError, ConnectionError):
                return

    def stream_huge(self, size):
        """`size` bytes of "[0,0,0,..." in 64 KiB writes; the array never closes."""
        self.send_head(200, JSON_TYPE, size)
        self.wfile.write(b"[")
        chunk = b"0," * 32768
        sent = 1
        while sent < size:
            piece = chunk[: size - sent]
            self.wfile.write(piece)
            sent += len(piece)

    # Plumbing

    def encoded(self, body):
        """(body, extra headers): gzipped when the client accepts it, as the real server does."""
        if body and accepts_gzip(self.headers.get("Accept-Encoding", "")):
            return gzip.compress(body, compresslevel=6, mtime=0), [("Content-Encoding", "gzip")]
        return body, []

    def send_head(self, status, content_type, length, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def send_body(self, status, content_type, body, headers=()):
        body, encoding = self.encoded(body)
        self.send_head(status, content_type, len(body), [*headers, *encoding])
        self.wfile.write(body)

    def send_json(self, status, value):
        body = dumps(value)
        self.send_head(status, JSON_TYPE, len(body))
        self.wfile.write(body)

    def send_plain(self, status, text):
        body = text.encode()
        self.send_head(status, TEXT_TYPE, len(body))
        self.wfile.write(body)

    def log_request(self, code="-", size="-"):
        if not self.server.quiet:
            path = self.path if len(self.path) <= 100 else self.path[:97] + "..."
            sys.stderr.write(f"{self.command} {path} {code}\n")

    def log_message(self, format, *args):
        sys.stderr.write(f"fake_weather: {format % args}\n")


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, address, fixtures, latency_ms, quiet, owm_key=DEFAULT_OWM_KEY):
        if isinstance(fixtures, list):  # the Open-Meteo templates alone, as before
            fixtures = Fixtures(fixtures, DEFAULT_FIXTURES)
        self.fixtures = fixtures
        self.templates = fixtures.templates
        self.state = State(latency_ms, owm_key, fixtures.geocoding.get("results", []))
        self.quiet = quiet
        super().__init__(address, Handler)

    def server_bind(self):
        # HTTPServer.server_bind would resolve the host name (getfqdn), which can stall offline.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # the client went away (timeouts, aborted huge/slow bodies): expected here
        super().handle_error(request, client_address)


# --- Main -----------------------------------------------------------------------------------


def load_templates(directory):
    path = Path(directory) / FIXTURE_NAME
    try:
        templates = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        sys.exit(f"fake_weather: cannot read {path}: {error}")
    if not isinstance(templates, list) or not templates:
        sys.exit(f"fake_weather: {path} must hold a non-empty JSON array")
    return templates


def read_fixture(directory, name):
    """The bytes of fixture `name` from `directory`, else from the default directory."""
    for folder in (Path(directory), DEFAULT_FIXTURES):
        path = folder / name
        if path.is_file():
            try:
                return path.read_bytes()
            except OSError as error:
                sys.exit(f"fake_weather: cannot read {path}: {error}")
    sys.exit(f"fake_weather: cannot find {name} in {directory} or {DEFAULT_FIXTURES}")


class Fixtures:
    """Every fixture the fake answers from, and what is generated from them once."""

    def __init__(self, templates, directory):
        self.templates = templates
        for attribute, name in OTHER_FIXTURES.items():
            raw = read_fixture(directory, name)
            try:
                value = json.loads(raw)
            except ValueError as error:
                sys.exit(f"fake_weather: {name} is not JSON: {error}")
            if not isinstance(value, dict):
                sys.exit(f"fake_weather: {name} must hold a JSON object")
            setattr(self, attribute, value)
        self.owm_401_bytes = read_fixture(directory, OTHER_FIXTURES["owm_401"]).strip()
        try:
            self.owm_list = owm_forecast_list(self.owm_forecast)
            self.met_document = copy.deepcopy(self.met)
            self.met_document["properties"]["timeseries"] = met_timeseries()
            self.met["geometry"]["coordinates"][2]
        except (KeyError, IndexError, TypeError) as error:
            sys.exit(f"fake_weather: a provider fixture lacks what the fake needs: {error!r}")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Fake weather APIs: Open-Meteo, OpenWeatherMap, MET Norway "
                                                 "(see the module docstring).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fixtures", default=str(DEFAULT_FIXTURES))
    parser.add_argument("--owm-key", default=DEFAULT_OWM_KEY, help="the OpenWeatherMap appid the fake accepts")
    parser.add_argument("--quiet", action="store_true", help="no per-request log lines")
    return parser.parse_args(argv)


def main(argv=None):
    arguments = parse_arguments(argv)
    fixtures = Fixtures(load_templates(arguments.fixtures), arguments.fixtures)
    try:
        server = FakeServer((arguments.host, arguments.port), fixtures, arguments.latency_ms, arguments.quiet,
                            arguments.owm_key)
    except OSError as error:
        sys.exit(f"fake_weather: cannot listen on {arguments.host}:{arguments.port}: {error}")

    def stop(_signum, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    print(f"listening {host}:{port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
