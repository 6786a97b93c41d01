"""MET Norway's MetAlerts 2.0 GeoJSON (api.met.no) as the fake serves it.

GET /weatherapi/metalerts/2.0/current.json?lat=&lon=[&lang=en|no] (answers like api.met.no):
    User-Agent   403 HTML page unless it identifies the client (met_norway.py's rule).
    lat, lon     required, at most 4 decimals, in range; else 400 HTML page. lang other than
                 en or no: 400.
    Answer       200 application/json: met-norway-metalerts.json with the active alerts (set
                 over /-/warnings, see warning_alerts.py) as "features", "lang" as asked, for a
                 point in 56-81 N, 0-35 E; elsewhere no features. Keys sorted, like MET.
    Headers      Last-Modified: "Mon, 15 Jun 2026 12:00:00 GMT" plus one minute per change made
                 over /-/warnings; Expires: the response's wall-clock time + 60 s.
    If-Modified-Since equal to the current Last-Modified: 304, no body, the same headers.
    /-/warnings "fail": that status with an HTML page.
"""

import json
import time
from email.utils import formatdate

from .met_norway import identifying_agent, met_page
from .protocol import HTML_TYPE, JSON_TYPE
from .warning_alerts import point, served

MET_ALERTS_PATH = "/weatherapi/metalerts/2.0/current.json"
FIRST_CHANGE = 1781524800  # 2026-06-15 12:00:00 UTC
EXPIRES_IN = 60


def met_alerts_endpoint(fixtures, request):
    settings = request.job.settings
    if "met-norway" in settings["warnings_fail"]:
        status = settings["warnings_fail"]["met-norway"]
        return status, HTML_TYPE, met_page(status, "The fake's failure."), []
    if not identifying_agent(request.headers.get("user-agent", "")):
        return 403, HTML_TYPE, met_page(403, "Identify your application with a User-Agent."), []
    query = request.query
    located = point(query.get("lat"), query.get("lon"))
    precise = all(len(query.get(name, "").partition(".")[2]) <= 4 for name in ("lat", "lon"))
    if located is None or not precise or query.get("lang", "no") not in ("en", "no"):
        return 400, HTML_TYPE, met_page(400, "Bad parameters."), []
    last_modified = formatdate(FIRST_CHANGE + 60 * settings["warnings_revision"]["met-norway"], usegmt=True)
    headers = [("Last-Modified", last_modified), ("Expires", formatdate(time.time() + EXPIRES_IN, usegmt=True))]
    if request.headers.get("if-modified-since") == last_modified:
        return 304, None, b"", headers
    latitude, longitude = located
    inside = 56 <= latitude <= 81 and 0 <= longitude <= 35
    document = dict(fixtures.met_alerts)
    document["features"] = served(settings, "met-norway", fixtures.met_alerts["features"]) if inside else []
    document["lang"] = query.get("lang", "no")
    return 200, JSON_TYPE, json.dumps(document, sort_keys=True, ensure_ascii=False).encode(), headers


ROUTES = {MET_ALERTS_PATH: met_alerts_endpoint}
