"""The Open-Meteo forecast API (api.open-meteo.com) as the fake serves it.

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
    timezone              one value or one per place, each "auto" or a zone name the machine's
                          tzdata knows (else 400 "Invalid timezone", as the real API); answers
                          keep the fixture's zone
    Place i (0-based, request order) is the fixture entry multi[i % 3] (Berlin, London,
    New York) with the requested coordinates and "location_id": i for i >= 1. One place
    gives an object, several an array. Timestamps stay those of the fixture (2026-06-15).
"""

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from .protocol import JSON_TYPE, BadRequest, dumps

FORECAST_PATH = "/v1/forecast"
MAX_LOCATIONS = 1000
MAX_FORECAST_DAYS = 16
MAX_FORECAST_HOURS = 384
SECTIONS = ("current", "hourly", "daily")
TOP_LEVEL_KEYS = ("generationtime_ms", "utc_offset_seconds", "timezone", "timezone_abbreviation", "elevation")
TEMPERATURE_UNITS = {"celsius": None, "fahrenheit": ("°F", lambda c: c * 9 / 5 + 32)}
WIND_SPEED_UNITS = {
    "kmh": None,
    "ms": ("m/s", lambda v: v / 3.6),
    "mph": ("mp/h", lambda v: v / 1.609344),
    "kn": ("kn", lambda v: v / 1.852),
}
TIME_FORMATS = ("iso8601", "unixtime")
BAD_ENTRY = {"latitude": "north", "current": [1, 2]}


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
    zones = text.split(",")
    if len(zones) not in (1, places):
        raise BadRequest("Parameter 'latitude' and 'timezone' must have the same number of elements")
    for zone in zones:
        if zone != "auto" and not known_zone(zone):
            raise BadRequest("Invalid timezone")


def known_zone(name):
    try:
        ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


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


def forecast_endpoint(fixtures, request):
    status, body = forecast_answer(fixtures.templates, request.query, request.job.fault, request.job.overrides)
    return status, JSON_TYPE, body, []


ROUTES = {FORECAST_PATH: forecast_endpoint}
