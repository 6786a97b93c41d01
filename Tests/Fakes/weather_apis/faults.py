"""Faults a test injects into weather requests with POST /-/fault, and the bodies they answer with.

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
                         MET Norway a short HTML page, Dark Sky (/forecast/) the gateway's
                         {"message":..} (401 the fixture, 429 "API rate limit exceeded")
        malformed_json   200 with the first half of the real JSON
        truncated        200 announcing the full Content-Length, half the body, then close
        empty            200 with an empty body
        html             200 text/html captive-portal page
        huge             {"bytes": 67108864} 200 streaming "[0,0,0,..." that never closes
      Open-Meteo's batched APIs only (they apply to /v1/forecast and /v1/air-quality and
      nothing else, whatever "path" says; a "path" that can match neither is refused):
        nulls            every current/hourly/daily value null (times stay)
        missing_section  {"section": "current"|"hourly"|"daily", "place": i} section dropped
                         for that place (every place without "place")
        wrong_count      the array has one entry fewer than places requested ([] for one)
        bad_entry        {"place": 0} that entry becomes {"latitude":"north","current":[1,2]}
      (malformed_json, truncated and slow keep the endpoint's status and headers: a MET
      answer stays 203 in 203 mode, a 304 stays an empty 304.)
"""

import json
from http.server import BaseHTTPRequestHandler

from .dark_sky import DARK_SKY_PREFIX, dark_sky_status_body
from .met_norway import met_page
from .air_quality import AIR_QUALITY_PATH
from .open_meteo import FORECAST_PATH, SECTIONS
from .openweathermap import owm_status_body
from .protocol import HTML_TYPE, JSON_TYPE, TEXT_TYPE, dumps, number

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
OPEN_METEO_BATCH_PATHS = (FORECAST_PATH, AIR_QUALITY_PATH)
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
        if mode in OPEN_METEO_ONLY_FAULTS and not any(batch.startswith(path) for batch in OPEN_METEO_BATCH_PATHS):
            paths = ", ".join(OPEN_METEO_BATCH_PATHS)
            raise ValueError(f"mode {mode!r} applies to {paths} only; 'path' {path!r} cannot match them")
        fault["path"] = path
    count = None if body.get("count") is None else number(body, "count", minimum=1)
    return fault, count


def fault_applies(fault, path):
    """True when `fault` acts on a weather request for `path`."""
    if fault.get("path") is not None and not path.startswith(fault["path"]):
        return False
    return fault["mode"] not in OPEN_METEO_ONLY_FAULTS or path in OPEN_METEO_BATCH_PATHS


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
    if fault.get("body") is not None or fault["status"] == 503:
        return status_fault_body(fault)
    if path.startswith(DARK_SKY_PREFIX):
        return JSON_TYPE, dark_sky_status_body(fault["status"], fixtures)
    if not path.startswith(("/data/", "/weatherapi/")):
        return status_fault_body(fault)
    if path.startswith("/data/"):
        return JSON_TYPE, owm_status_body(fault["status"], fixtures)
    return HTML_TYPE, met_page(fault["status"], "The fake's status fault.")
