"""The fixtures the fake answers from (Tests/CloudyTests/Fixtures), and what is generated from them once.
"""

import copy
import json
import sys
from pathlib import Path

from .met_norway import met_timeseries
from .openweathermap import owm_forecast_list

FIXTURE_NAME = "open-meteo-forecast-multi.json"
OTHER_FIXTURES = {
    "owm_current": "openweathermap-current.json",
    "owm_forecast": "openweathermap-forecast.json",
    "owm_401": "openweathermap-error-401.json",
    "owm_onecall": "openweathermap-onecall.json",
    "met": "met-no-compact.json",
    "dark_sky": "pirateweather-forecast.json",
    "dark_sky_401": "pirateweather-error-401.json",
    "geocoding": "open-meteo-geocoding.json",
    "geocoding_empty": "open-meteo-geocoding-empty.json",
    "air_quality": "open-meteo-air-quality.json",
    "owm_air_pollution": "openweathermap-air-pollution.json",
    "nws": "nws-alerts-active.json",
    "met_alerts": "met-norway-metalerts.json",
    "brightsky": "brightsky-alerts.json",
    "brightsky_outside": "brightsky-alerts-outside-germany.json",
}
DEFAULT_FIXTURES = Path(__file__).absolute().parents[2] / "CloudyTests" / "Fixtures"  # Tests/Fakes/weather_apis/


def load_templates(directory):
    """The Open-Meteo forecast templates, from `directory` or, when it lacks them, the default one."""
    try:
        templates = json.loads(read_fixture(directory, FIXTURE_NAME).decode("utf-8"))
    except ValueError as error:
        sys.exit(f"fake_weather: {FIXTURE_NAME} is not JSON: {error}")
    if not isinstance(templates, list) or not templates:
        sys.exit(f"fake_weather: {FIXTURE_NAME} must hold a non-empty JSON array")
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
        self.dark_sky_401_bytes = read_fixture(directory, OTHER_FIXTURES["dark_sky_401"]).strip()
        try:
            self.owm_list = owm_forecast_list(self.owm_forecast)
            self.met_document = copy.deepcopy(self.met)
            self.met_document["properties"]["timeseries"] = met_timeseries()
            self.met["geometry"]["coordinates"][2]
            self.dark_sky["flags"]["units"]
            self.warning_alerts = {"nws": self.nws["features"], "met-norway": self.met_alerts["features"],
                                   "dwd": self.brightsky["alerts"]}
        except (KeyError, IndexError, TypeError) as error:
            sys.exit(f"fake_weather: a provider fixture lacks what the fake needs: {error!r}")
