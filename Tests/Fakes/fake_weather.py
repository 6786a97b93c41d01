#!/usr/bin/env python3
"""Local fake of the Open-Meteo forecast API for Cloudy's tests and benchmarks.

Usage:
    python3 Tests/Fakes/fake_weather.py [--host 127.0.0.1] [--port 0] [--latency-ms 0]
                                        [--fixtures DIR] [--quiet]

    --fixtures  directory holding open-meteo-forecast-multi.json
                (default: ../CloudyTests/Fixtures next to this script)
    --quiet     no per-request log lines on stderr (errors are still logged)

When ready it prints exactly one line, `listening HOST:PORT` (the real port when --port 0),
to stdout; everything else goes to stderr. SIGTERM or SIGINT stops it with exit status 0.
Python 3.11 standard library only; HTTP/1.1 keep-alive, one thread per connection.

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
    The body is gzipped when Accept-Encoding allows it. Other paths: 404 "Not Found".

Control endpoints (JSON bodies; never counted as weather requests):
    POST /-/reset     clear overrides, fault and request log; latency back to --latency-ms
    POST /-/latency   {"ms": 100}  sleep before every weather answer
    POST /-/override  {"place": 1, "current": {"temperature_2m": -3.0},
                       "hourly": {"precipitation": [0.5, null]}, "daily": {"uv_index_max": 9}}
                      Values are in the API's default units (°C, km/h) and get converted like
                      fixture values. "place" absent/null = every place. Hourly/daily: a list
                      replaces the leading entries (extra ones are ignored), anything else
                      sets every entry. Overrides accumulate until /-/reset.
    POST /-/fault     {"mode": M, ...options, "count": n}; "count" limits the fault to the
                      next n weather requests; {"mode": "ok"} clears it. Modes:
        hang             read the request, never answer (until the client closes, max 10 min)
        slow             {"delay_ms": 200} correct headers, then the body one byte per delay
        status           {"status": 503, "body": ..., "retry_after": 30} that status; default
                         body is the API's error JSON (an HTML page for 503)
        malformed_json   200 with the first half of the real JSON
        truncated        200 announcing the full Content-Length, half the body, then close
        empty            200 with an empty body
        html             200 text/html captive-portal page
        huge             {"bytes": 67108864} 200 streaming "[0,0,0,..." that never closes
        nulls            every current/hourly/daily value null (times stay)
        missing_section  {"section": "current"|"hourly"|"daily", "place": i} section dropped
                         for that place (every place without "place")
        wrong_count      the array has one entry fewer than places requested ([] for one)
        bad_entry        {"place": 0} that entry becomes {"latitude":"north","current":[1,2]}
    GET /-/requests   {"count": N, "in_flight": I, "max_in_flight": M, "requests": [
                        {"path", "query": {name: value}, "headers": {lower-case name: value},
                         "time": epoch seconds}, ...]}  (the last 10000 weather requests;
                      max_in_flight = most weather requests served at once since the reset)
Bad control bodies get 400 {"error": "..."}.
"""

import argparse
import collections
import gzip
import json
import signal
import socketserver
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

FORECAST_PATH = "/v1/forecast"
FIXTURE_NAME = "open-meteo-forecast-multi.json"
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
    unknown = set(body) - {"place", *SECTIONS}
    if unknown:
        raise ValueError(f"unknown override keys {sorted(unknown)}; allowed: place, current, hourly, daily")
    override = {"place": None if body.get("place") is None else number(body, "place")}
    for section in SECTIONS:
        values = body.get(section, {})
        if not isinstance(values, dict):
            raise ValueError(f"'{section}' must be an object of variable -> value")
        override[section] = values
    return override


def parse_fault(body):
    """(fault, count): the fault dict with its options filled in, and the request budget."""
    mode = body.get("mode")
    if mode not in FAULT_OPTIONS:
        raise ValueError(f"unknown fault mode {mode!r}; one of {', '.join(FAULT_OPTIONS)}")
    unknown = set(body) - FAULT_OPTIONS[mode] - {"mode", "count"}
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
    count = None if body.get("count") is None else number(body, "count", minimum=1)
    return fault, count


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


# --- Shared state ---------------------------------------------------------------------------


class Job:
    """What one weather request runs with, fixed when it arrives."""

    def __init__(self, fault, latency_ms, overrides):
        self.fault, self.latency_ms, self.overrides = fault, latency_ms, overrides


class State:
    """Overrides, fault, latency and the request log; every access holds `lock`."""

    def __init__(self, latency_ms):
        self.lock = threading.Lock()
        self.default_latency_ms = latency_ms
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
        return {"ok": True}

    def set_latency(self, body):
        ms = parse_latency(body)
        with self.lock:
            self.latency_ms = ms
        return {"ok": True, "ms": ms}

    def add_override(self, body):
        override = parse_override(body)
        with self.lock:
            self.overrides += (override,)
            return {"ok": True, "overrides": len(self.overrides)}

    def set_fault(self, body):
        fault, count = parse_fault(body)
        with self.lock:
            self.fault, self.fault_budget = fault, count
        return {"ok": True, "fault": fault, "count": count}

    def begin(self, record):
        """Logs a weather request, counts it in flight and hands out (and spends) the fault."""
        with self.lock:
            self.count += 1
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            job = Job(self.fault, self.latency_ms, self.overrides)
            if self.fault_budget is not None:
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
        if url.path == FORECAST_PATH:
            self.serve_forecast(url)
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

    def serve_forecast(self, url):
        query = {name: ",".join(values) for name, values in parse_qs(url.query, keep_blank_values=True).items()}
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = {"path": url.path, "query": query, "headers": headers, "time": time.time()}
        state = self.server.state
        job = state.begin(record)
        try:
            time.sleep(job.latency_ms / 1000)
            self.answer_forecast(query, job)
        finally:
            state.end()

    def answer_forecast(self, query, job):
        fault = job.fault
        mode = fault["mode"]
        if mode == "hang":
            return self.hang()
        if mode == "huge":
            return self.stream_huge(fault["bytes"])
        if mode == "status":
            content_type, body = status_fault_body(fault)
            extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
            return self.send_body(fault["status"], content_type, body, extra)
        if mode == "empty":
            return self.send_body(200, JSON_TYPE, b"")
        if mode == "html":
            return self.send_body(200, HTML_TYPE, CAPTIVE_PORTAL_PAGE.encode())
        status, body = forecast_answer(self.server.templates, query, fault, job.overrides)
        if mode == "malformed_json":
            body = body[: len(body) // 2]
        body, headers = self.encoded(body)
        if mode == "truncated":
            self.close_connection = True
            self.send_head(status, JSON_TYPE, len(body), headers)
            self.wfile.write(body[: len(body) // 2])
        elif mode == "slow":
            self.send_head(status, JSON_TYPE, len(body), headers)
            for index in range(len(body)):
                if index:
                    time.sleep(fault["delay_ms"] / 1000)
                self.wfile.write(body[index:index + 1])
        else:
            self.send_head(status, JSON_TYPE, len(body), headers)
            self.wfile.write(body)

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

    def __init__(self, address, templates, latency_ms, quiet):
        self.templates = templates
        self.state = State(latency_ms)
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


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Fake Open-Meteo forecast API (see the module docstring).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fixtures", default=str(Path(__file__).absolute().parent.parent / "CloudyTests" / "Fixtures"))
    parser.add_argument("--quiet", action="store_true", help="no per-request log lines")
    return parser.parse_args(argv)


def main(argv=None):
    arguments = parse_arguments(argv)
    templates = load_templates(arguments.fixtures)
    try:
        server = FakeServer((arguments.host, arguments.port), templates, arguments.latency_ms, arguments.quiet)
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
