"""Bright Sky's DWD alerts (api.brightsky.dev) as the fake serves them.

GET /alerts?lat=&lon=[&tz=] (answers like Bright Sky):
    lat, lon     both or neither (neither: every active alert); only one, or out of range: 422
                 {"detail": [{"type", "loc", "msg", "input"}]} as FastAPI writes it.
    Answer       200 application/json, compact: {"alerts": [...], "location": {...}} with the
                 active alerts (set over /-/warnings, see warning_alerts.py) and the fixture's
                 location, for a point in Germany's box (47.2-55.1 N, 5.8-15.1 E); elsewhere 404
                 brightsky-alerts-outside-germany.json ({"detail": "Requested position is not
                 covered by the DWD"}).
    /-/warnings "fail": that status with {"detail": "The fake's failure."}.
"""

from .protocol import JSON_TYPE, dumps
from .warning_alerts import point, served

BRIGHTSKY_PATH = "/alerts"


def unprocessable(name, value):
    detail = [{"type": "value_error", "loc": ["query", name], "msg": "Invalid coordinates", "input": value}]
    return 422, JSON_TYPE, dumps({"detail": detail}), []


def brightsky_endpoint(fixtures, request):
    settings = request.job.settings
    if "dwd" in settings["warnings_fail"]:
        return settings["warnings_fail"]["dwd"], JSON_TYPE, dumps({"detail": "The fake's failure."}), []
    query = request.query
    alerts = served(settings, "dwd", fixtures.brightsky["alerts"])
    if "lat" not in query and "lon" not in query:
        return 200, JSON_TYPE, dumps({"alerts": alerts}), []
    located = point(query.get("lat"), query.get("lon"))
    if located is None:
        name = "lat" if "lat" not in query or point(query.get("lat"), "0") is None else "lon"
        return unprocessable(name, query.get(name))
    latitude, longitude = located
    if not (47.2 <= latitude <= 55.1 and 5.8 <= longitude <= 15.1):
        return 404, JSON_TYPE, dumps(fixtures.brightsky_outside), []
    return 200, JSON_TYPE, dumps({"alerts": alerts, "location": fixtures.brightsky["location"]}), []


ROUTES = {BRIGHTSKY_PATH: brightsky_endpoint}
