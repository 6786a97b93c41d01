"""The Dark Sky forecast API as Pirate Weather (api.pirateweather.net) serves it.

Dark Sky, GET /forecast/<key>/<lat>,<lon>[,<time>]?units=&exclude=&version= (answers like
api.pirateweather.net; the key is in the path, which is why every path under /forecast/ routes here):
    key          must equal the accepted key (--dark-sky-key, POST /-/dark-sky {"key"}; default
                 test-dark-sky-key); missing or different: 401 with the body of
                 pirateweather-error-401.json. Checked first, as Pirate's gateway does.
    quota        when POST /-/dark-sky set {"remaining": 0}: 429 {"message":"API rate limit
                 exceeded"} with RateLimit-Remaining: 0, RateLimit-Reset and Retry-After = the
                 seconds to the key's monthly reset (the monthly quota is spent). Checked after
                 the key.
    lat,lon      decimal numbers in range, else 400 {"detail":"Invalid Latitude"} / "Invalid
                 Longitude"; a segment that is not lat,lon[,time]: 400 {"detail":"Invalid
                 Location Specification"}. A time is accepted and ignored.
    units        si: the fixture's values. us (also when absent, the API's default): every
                 temperature field F = C*9/5+32, wind m/s / 0.44704 (mph), visibility km /
                 1.609344 (miles), precipIntensity mm/h / 25.4 (in/h). uk: wind mph and
                 visibility miles. ca: wind * 3.6 (km/h). Anything else: 400 {"detail":"Invalid
                 units"}. No rounding (compare with a tolerance).
    exclude      comma list of top-level blocks left out: currently, minutely, hourly, daily,
                 alerts, flags (the fixture has no minutely block).
    Answer       200 application/json: pirateweather-forecast.json with latitude and longitude
                 the request's rounded to 4 decimals, flags.units the units asked for, and the
                 alerts POST /-/dark-sky {"alerts": [...]} set (null: the fixture's one Heat
                 Advisory). Times stay the fixture's (2026-06-15; currently 12:20Z, hourly from
                 12:00Z, daily from New York's midnight, offset -4). Headers as the gateway sends
                 them: Cache-Control: max-age=900, RateLimit-Limit: 10000,
                 RateLimit-Remaining: the /-/dark-sky "remaining" (default 9999),
                 RateLimit-Reset: the seconds to the key's monthly reset: the /-/dark-sky
                 "reset" (a key's month starts on the day it was made), by default the seconds
                 to the next UTC month.
    Overrides    POST /-/override {"provider": "dark-sky", "currently": {"temperature": -3.0},
                 "hourly": {"precipIntensity": [0.5, 1.2]}, "daily": {"temperatureMin": -2}}:
                 a key sets that field of the block's point(s), in SI units before conversion;
                 in hourly and daily a list gives entry i the list's item i (leading entries),
                 anything else goes to every entry; null sets null (-999 is the API's own "no value").
"""

import copy
import math
import time
from datetime import datetime, timezone

from .protocol import JSON_TYPE, dumps

DARK_SKY_PREFIX = "/forecast/"
DEFAULT_DARK_SKY_KEY = "test-dark-sky-key"
DEFAULT_REMAINING = 9999
DARK_SKY_LIMIT = 10000
DARK_SKY_SECTIONS = ("currently", "hourly", "daily")
BLOCKS = ("currently", "minutely", "hourly", "daily", "alerts", "flags")
TEMPERATURE_FIELDS = ("temperature", "apparentTemperature", "dewPoint", "feelsLike", "temperatureMin",
                      "temperatureMax", "temperatureHigh", "temperatureLow", "apparentTemperatureMin",
                      "apparentTemperatureMax", "apparentTemperatureHigh", "apparentTemperatureLow")
WIND_FIELDS = ("windSpeed", "windGust")
MPH = lambda v: v / 0.44704  # noqa: E731
MILES = lambda v: v / 1.609344  # noqa: E731
UNIT_CONVERSIONS = {
    "si": {},
    "us": {**{f: lambda c: c * 9 / 5 + 32 for f in TEMPERATURE_FIELDS}, **{f: MPH for f in WIND_FIELDS},
           "visibility": MILES, "precipIntensity": lambda v: v / 25.4},
    "uk": {**{f: MPH for f in WIND_FIELDS}, "visibility": MILES},
    "ca": {f: (lambda v: v * 3.6) for f in WIND_FIELDS},
}
RATE_LIMITED = {"message": "API rate limit exceeded"}


def seconds_to_next_month(now=None):
    moment = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc)
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return max(1, int(datetime(year, month, 1, tzinfo=timezone.utc).timestamp() - moment.timestamp()))


def location(segment):
    """(lat, lon) from "lat,lon[,time]", or the 400 detail."""
    parts = segment.split(",")
    if len(parts) not in (2, 3):
        return None, "Invalid Location Specification"
    values = []
    for text, word, limit in ((parts[0], "Latitude", 90), (parts[1], "Longitude", 180)):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and -limit <= value <= limit):
            return None, f"Invalid {word}"
        values.append(round(value, 4))
    return tuple(values), None


def apply_overrides(body, overrides):
    for override in overrides:
        for section in DARK_SKY_SECTIONS:
            block = body.get(section)
            if not isinstance(block, dict):
                continue
            points = [block] if section == "currently" else block.get("data", [])
            for key, value in override.get(section, {}).items():
                if isinstance(value, list) and section != "currently":
                    for point, item in zip(points, value):
                        point[key] = item
                else:
                    for point in points:
                        point[key] = copy.deepcopy(value)


def convert(body, units):
    conversions = UNIT_CONVERSIONS[units]
    points = [body["currently"]] if isinstance(body.get("currently"), dict) else []
    for section in ("hourly", "daily"):
        if isinstance(body.get(section), dict):
            points += body[section].get("data", [])
    for point in points:
        for field, change in conversions.items():
            value = point.get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value != -999:
                point[field] = change(value)


def dark_sky_answer(fixtures, path, query, settings):
    """(status, JSON bytes, extra headers) for /forecast/<key>/<location>."""
    reset = str(settings["dark_sky_reset"] or seconds_to_next_month())
    headers = [("Cache-Control", "max-age=900"), ("RateLimit-Limit", str(DARK_SKY_LIMIT)),
               ("RateLimit-Remaining", str(settings["dark_sky_remaining"])), ("RateLimit-Reset", reset)]
    parts = path[len(DARK_SKY_PREFIX):].split("/")
    if len(parts) != 2 or parts[0] != settings["dark_sky_key"]:
        return 401, fixtures.dark_sky_401_bytes, []
    if settings["dark_sky_remaining"] == 0:
        return 429, dumps(RATE_LIMITED), [*headers, ("Retry-After", reset)]
    coordinates, problem = location(parts[1])
    units = query.get("units", "us")
    if problem is None and units not in UNIT_CONVERSIONS:
        problem = "Invalid units"
    if problem:
        return 400, dumps({"detail": problem}), headers
    body = copy.deepcopy(fixtures.dark_sky)
    body["latitude"], body["longitude"] = coordinates
    if settings["dark_sky_alerts"] is not None:
        body["alerts"] = copy.deepcopy(settings["dark_sky_alerts"])
    apply_overrides(body, settings["dark_sky_overrides"])
    convert(body, units)
    body["flags"]["units"] = units
    for block in query.get("exclude", "").split(","):
        body.pop(block.strip(), None)
    return 200, dumps(body), headers


def dark_sky_status_body(status, fixtures):
    """The default body of a `status` fault under /forecast/: the gateway's JSON."""
    if status == 401:
        return fixtures.dark_sky_401_bytes
    if status == 429:
        return dumps(RATE_LIMITED)
    return dumps({"message": "An unexpected error occurred"})


def parse_dark_sky(body):
    """The /-/dark-sky settings to change."""
    unknown = set(body) - {"key", "remaining", "reset", "alerts"}
    if unknown or not body:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: key, remaining, reset, alerts" if unknown
                         else "give key, remaining, reset and/or alerts")
    changes = {}
    if "key" in body:
        if not isinstance(body["key"], str) or not body["key"] or "/" in body["key"]:
            raise ValueError(f"'key' must be a non-empty string without '/', got {body['key']!r}")
        changes["dark_sky_key"] = body["key"]
    if "remaining" in body:
        value = body["remaining"]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= DARK_SKY_LIMIT:
            raise ValueError(f"'remaining' must be an integer 0..{DARK_SKY_LIMIT}, got {value!r}")
        changes["dark_sky_remaining"] = value
    if "reset" in body:
        value = body["reset"]
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"'reset' must be a positive integer (seconds) or null, got {value!r}")
        changes["dark_sky_reset"] = value
    if "alerts" in body:
        if body["alerts"] is not None and not isinstance(body["alerts"], list):
            raise ValueError("'alerts' must be a list of alert objects or null")
        changes["dark_sky_alerts"] = body["alerts"]
    return changes


def dark_sky_endpoint(fixtures, request):
    status, body, headers = dark_sky_answer(fixtures, request.path, request.query, request.job.settings)
    return status, JSON_TYPE, body, headers


PREFIX_ROUTES = {DARK_SKY_PREFIX: dark_sky_endpoint}
