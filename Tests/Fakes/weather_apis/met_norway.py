"""MET Norway Locationforecast 2.0 compact (api.met.no) as the fake serves it.

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
"""

import copy
import re
import time
from datetime import datetime, timedelta, timezone
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler

from .protocol import HTML_TYPE, JSON_TYPE, BadRequest, dumps, number

MET_PATH = "/weatherapi/locationforecast/2.0/compact"
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


def met_endpoint(fixtures, request):
    return met_answer(fixtures, request, request.job.settings)


ROUTES = {MET_PATH: met_endpoint}
