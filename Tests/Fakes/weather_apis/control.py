"""The fake's state and its control API under /-/.

Control endpoints (JSON bodies; never counted as weather requests):
    POST /-/reset     clear overrides, fault and request log; latency back to --latency-ms;
                      OWM key back to --owm-key and OWM timezone to the fixture's; the Dark Sky
                      key back to --dark-sky-key, its remaining calls and alerts to the defaults; /-/met
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
    POST /-/fault     see faults.py: {"mode": M, ...options, "path": P, "count": n}
      "dark-sky":     {"provider": "dark-sky", "currently": {"temperature": -3.0},
                       "hourly": {"precipIntensity": [0.5, 1.2]}, "daily": {"uvIndex": 9}}
                      see dark_sky.py.
    POST /-/dark-sky  {"key": "KEY", "remaining": 0, "reset": 432000, "alerts": [...]}  any of
                      them: the accepted key (in the path), the RateLimit-Remaining sent (0: every
                      request gets the monthly quota's 429), the RateLimit-Reset seconds (null: to
                      the next UTC month), the alerts served (null: the fixture's); see dark_sky.py
    POST /-/owm       {"key": "KEY", "timezone": -18000}  either or both: the accepted appid,
                      and the offset in seconds for /weather "timezone" and /forecast
                      "city.timezone" (null = the fixture's 7200)
    POST /-/met       {"last_modified": "...", "expires_in": 5, "status": 203}  any of them:
                      the Last-Modified value (any non-empty single-line text; null = the
                      default), Expires = response time + expires_in seconds (null = 1800),
                      and the status of successful answers, 200 or 203 (deprecated product)
    POST /-/warnings  {"source": "nws"|"met-norway"|"dwd", "alerts": [...] | "update": {...} | "fail": 503}
                      the warning services' active alerts and failures (warning_alerts.py)
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

import collections
import threading

from .faults import OK_FAULT, fault_applies, parse_fault
from .dark_sky import DARK_SKY_SECTIONS, DEFAULT_DARK_SKY_KEY, DEFAULT_REMAINING, parse_dark_sky
from .geocoding import parse_geocoding
from .met_norway import MET_DEFAULT_EXPIRES_IN, MET_DEFAULT_LAST_MODIFIED, MET_SECTIONS, parse_met
from .open_meteo import SECTIONS
from .openweathermap import DEFAULT_OWM_KEY, parse_owm
from .protocol import number
from .warning_alerts import default_settings as default_warning_settings
from .warning_alerts import parse_warnings

MAX_LOGGED_REQUESTS = 10_000
PROVIDERS = ("open-meteo", "openweathermap", "met-norway", "dark-sky")


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
    if provider == "dark-sky":
        return provider, parse_sections(body, DARK_SKY_SECTIONS, dotted=False)
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


class Job:
    """What one weather request runs with, fixed when it arrives."""

    def __init__(self, fault, latency_ms, overrides, settings=None):
        self.fault, self.latency_ms, self.overrides = fault, latency_ms, overrides
        self.settings = settings or {}


class State:
    """Overrides, fault, latency, provider settings and the request log; every access holds `lock`."""

    def __init__(self, latency_ms, owm_key=DEFAULT_OWM_KEY, places=(), dark_sky_key=DEFAULT_DARK_SKY_KEY):
        self.lock = threading.Lock()
        self.default_latency_ms = latency_ms
        self.default_owm_key = owm_key
        self.default_dark_sky_key = dark_sky_key
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
                "dark_sky_key": self.default_dark_sky_key, "dark_sky_remaining": DEFAULT_REMAINING,
                "dark_sky_reset": None, "dark_sky_alerts": None, "dark_sky_overrides": (),
                **default_warning_settings(),
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
            key = {"openweathermap": "owm_overrides", "met-norway": "met_overrides"}.get(provider, "dark_sky_overrides")
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

    def set_dark_sky(self, body):
        settings = self.change_settings(parse_dark_sky(body))
        return {"ok": True, "key": settings["dark_sky_key"], "remaining": settings["dark_sky_remaining"],
                "reset": settings["dark_sky_reset"], "alerts": settings["dark_sky_alerts"]}

    def set_geocoding(self, body):
        settings = self.change_settings({"places": parse_geocoding(body, self.default_places)})
        return {"ok": True, "places": len(settings["places"])}

    def set_warnings(self, body, fixture_alerts):
        with self.lock:
            changes = parse_warnings(body, self.settings, fixture_alerts)
            self.settings = {**self.settings, **changes}
            source = body["source"]
            alerts = self.settings["warnings"][source]
            return {"ok": True, "source": source,
                    "alerts": len(fixture_alerts[source] if alerts is None else alerts),
                    "fail": self.settings["warnings_fail"].get(source)}

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
    "/-/dark-sky": State.set_dark_sky,
    "/-/geocoding": State.set_geocoding,
    "/-/warnings": State.set_warnings,
}
# Control posts that also need the fixtures.
NEEDS_FIXTURES = {State.set_warnings}
