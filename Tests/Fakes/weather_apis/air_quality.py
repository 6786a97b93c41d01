"""The Open-Meteo air-quality API (air-quality-api.open-meteo.com) as the fake serves it.

Air-quality endpoint, GET /v1/air-quality (answers like air-quality-api.open-meteo.com):
    latitude, longitude   comma lists of the same length, checked as for /v1/forecast (same
                          400 texts; at most 1000 places)
    current, hourly       comma lists; only requested sections and variables are returned, in
                          request order. A variable the fixture lacks comes back as null with
                          unit "undefined".
    forecast_days         0..7 (the API's range; 400 otherwise); the hourly arrays keep the
                          fixture's three hours (timestamps stay those of the fixture,
                          2026-06-15 12:00 UTC = the current hour)
    timezone              one value or one per place; answers keep the fixture's zone
    Every place answers from open-meteo-air-quality.json (Berlin) with the requested
    coordinates and "location_id": i for i >= 1. Pollen is forecast over Europe only (CAMS
    Europe: 25°W..45°E, 30°N..72°N): a place outside has every *_pollen value null, as the
    real API sends for New York. One place gives an object, several an array.
    The fault modes nulls, missing_section (current|hourly), wrong_count and bad_entry apply
    here as on /v1/forecast.
"""

from . import open_meteo
from .protocol import JSON_TYPE, BadRequest, dumps

AIR_QUALITY_PATH = "/v1/air-quality"
MAX_FORECAST_DAYS = 7
EUROPE = {"latitude": (30.0, 72.0), "longitude": (-25.0, 45.0)}


class AirQualityRequest:
    """The parts of a /v1/air-quality query the fake acts on, in the shape render_place reads."""

    def __init__(self, query):
        self.coordinates = open_meteo.parse_coordinates(query)
        open_meteo.check_timezones(query.get("timezone", "GMT"), len(self.coordinates))
        requested = {section: open_meteo.comma_list(query.get(section, "")) for section in ("current", "hourly")}
        self.variables = {section: names for section, names in requested.items() if names}
        open_meteo.parse_limit(query, "forecast_days", MAX_FORECAST_DAYS)
        self.limits = {"current": None, "hourly": None}
        self.conversions = {}
        self.iso_times = open_meteo.choice(query, "timeformat", open_meteo.TIME_FORMATS, "iso8601", "Timeformat") == (
            "iso8601"
        )


def in_europe(latitude, longitude):
    (south, north), (west, east) = EUROPE["latitude"], EUROPE["longitude"]
    return south <= latitude <= north and west <= longitude <= east


def without_pollen(entry):
    hourly = entry.get("hourly", {})
    for name, values in hourly.items():
        if name.endswith("_pollen"):
            hourly[name] = [None] * len(values)
    current = entry.get("current", {})
    for name in current:
        if name.endswith("_pollen"):
            current[name] = None


def air_quality_answer(template, query, fault):
    """(status, JSON bytes) for a /v1/air-quality query."""
    try:
        request = AirQualityRequest(query)
    except BadRequest as error:
        return 400, dumps({"error": True, "reason": str(error)})
    entries = []
    for index, (latitude, longitude) in enumerate(request.coordinates):
        entry = open_meteo.render_place(template, index, latitude, longitude, request)
        if not in_europe(latitude, longitude):
            without_pollen(entry)
        entries.append(entry)
    return 200, dumps(open_meteo.shaped_answer(entries, fault))


def air_quality_endpoint(fixtures, request):
    status, body = air_quality_answer(fixtures.air_quality, request.query, request.job.fault)
    return status, JSON_TYPE, body, []


ROUTES = {AIR_QUALITY_PATH: air_quality_endpoint}
