"""OpenWeatherMap (api.openweathermap.org) as the fake serves it: 2.5 current weather and
5-day/3-hour forecast, and One Call 3.0.

OpenWeatherMap, GET /data/2.5/weather and GET /data/2.5/forecast (and GET /data/3.0/onecall:
openweathermap-onecall.json with the request's lat/lon, same key check, metric values only;
and GET /data/2.5/air_pollution: openweathermap-air-pollution.json with the request's lat/lon
in "coord", same key check)
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
"""

import copy
import math
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler

from .protocol import JSON_TYPE, dumps

OWM_WEATHER_PATH = "/data/2.5/weather"
OWM_FORECAST_PATH = "/data/2.5/forecast"
OWM_ONECALL_PATH = "/data/3.0/onecall"
OWM_AIR_POLLUTION_PATH = "/data/2.5/air_pollution"
DEFAULT_OWM_KEY = "test-owm-key"
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


def owm_air_pollution_endpoint(fixtures, request):
    """Air Pollution (current): openweathermap-air-pollution.json with the request's lat/lon
    in "coord"; units have no effect, as on the real API."""
    try:
        lat, lon, _ = owm_check(request.query, request.job.settings, fixtures)
    except OwmError as error:
        return error.status, JSON_TYPE, error.body if isinstance(error.body, bytes) else dumps(error.body), []
    body = copy.deepcopy(fixtures.owm_air_pollution)
    body["coord"] = {"lon": lon, "lat": lat}
    return 200, JSON_TYPE, dumps(body), []


def owm_forecast_endpoint(fixtures, request):
    status, body = owm_forecast_answer(fixtures, request.query, request.job.settings)
    return status, JSON_TYPE, body, []


ROUTES = {
    OWM_WEATHER_PATH: owm_weather_endpoint,
    OWM_FORECAST_PATH: owm_forecast_endpoint,
    OWM_ONECALL_PATH: owm_onecall_endpoint,
    OWM_AIR_POLLUTION_PATH: owm_air_pollution_endpoint,
}
