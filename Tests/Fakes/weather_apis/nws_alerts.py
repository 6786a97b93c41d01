"""The US National Weather Service's active alerts (api.weather.gov) as the fake serves them.

GET /alerts/active?point=LAT,LON (answers like api.weather.gov):
    User-Agent   403 problem document unless non-blank (the service refuses requests without one).
    point        required "lat,lon", each with at most 4 decimals, in range; any other query
                 parameter (the service rejects unknown ones, e.g. limit) or a bad point: 400
                 problem document with parameterErrors.
    Answer       200 application/geo+json: nws-alerts-active.json with the active alerts (set
                 over /-/warnings, see warning_alerts.py) as "features" and the title naming the
                 point, for a point in the 48 states' box (24-50 N, 125.5-66.5 W); elsewhere
                 the same document with no features (the service's answer outside its area is
                 not confirmed; Cloudy never asks there).
    /-/warnings "fail": that status with a problem document.
"""

from .protocol import dumps
from .warning_alerts import point, served

NWS_PATH = "/alerts/active"
GEO_JSON_TYPE = "application/geo+json"
PROBLEM_TYPE = "application/problem+json"


def problem(status, title, detail, extra=None):
    body = {"correlationId": "fake", "title": title, "type": "https://api.weather.gov/problems/" + title.replace(" ", ""),
            "status": status, "detail": detail, "instance": "https://api.weather.gov/requests/fake", **(extra or {})}
    return status, PROBLEM_TYPE, dumps(body), []


def nws_endpoint(fixtures, request):
    settings = request.job.settings
    if "nws" in settings["warnings_fail"]:
        status = settings["warnings_fail"]["nws"]
        return problem(status, "Unexpected Problem", "The fake's failure.")
    if not request.headers.get("user-agent", "").strip():
        return problem(403, "Forbidden", "A User-Agent header is required.")
    unknown = set(request.query) - {"point"}
    text = request.query.get("point", "")
    parts = text.split(",")
    located = point(*parts) if len(parts) == 2 and all(len(p.partition(".")[2]) <= 4 for p in parts) else None
    if unknown or located is None:
        name = sorted(unknown)[0] if unknown else "point"
        return problem(400, "Bad Request", "Bad Request",
                       {"parameterErrors": [{"parameter": f"query.{name}", "message": "Invalid parameter"}]})
    latitude, longitude = located
    document = dict(fixtures.nws)
    inside = 24 <= latitude <= 50 and -125.5 <= longitude <= -66.5
    document["features"] = served(settings, "nws", fixtures.nws["features"]) if inside else []
    document["title"] = (f"Current watches, warnings, and advisories for {abs(latitude)} {'N' if latitude >= 0 else 'S'}, "
                         f"{abs(longitude)} {'E' if longitude >= 0 else 'W'}")
    return 200, GEO_JSON_TYPE, dumps(document), []


ROUTES = {NWS_PATH: nws_endpoint}
