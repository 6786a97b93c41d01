"""What the three warning services' fakes share: the active alerts each serves, set over
POST /-/warnings, and how a point is read.

POST /-/warnings  {"source": S, ...} with S one of "nws", "met-norway", "dwd", and one of:
    "alerts": [...]      the active alerts, each shaped exactly as one entry of that service's
                         list in its fixture (an NWS or MET feature, a Bright Sky alert); [] for
                         none; null for the fixture's own
    "update": {"id": ID, "set": {...}}
                         merges "set" into the alert whose id is ID (NWS and MET: properties.id,
                         whose keys "set" names; Bright Sky: alert_id, the alert's own keys);
                         MET's Last-Modified moves on (so If-Modified-Since misses)
    "fail": STATUS       every answer of that service is STATUS with its error body (NWS a
                         problem document, MET an HTML page, Bright Sky {"detail": ...}) until
                         "fail": null
Answers {"ok": true, "source": S, "alerts": N, "fail": STATUS or null}. POST /-/reset restores
the fixtures' alerts and clears "fail". The /-/fault modes apply too (use "path" to aim them).
"""

import copy
import datetime
import math
import re
import time

SOURCES = ("nws", "met-norway", "dwd")
COORDINATE = re.compile(r"^[+-]?\d+(\.\d+)?$")
ERROR_STATUSES = (400, 403, 404, 422, 429, 500, 502, 503)


def default_settings():
    """The warning part of the fake's settings: the fixtures' alerts (None), no failure."""
    return {"warnings": {source: None for source in SOURCES}, "warnings_fail": {},
            "warnings_revision": {source: 0 for source in SOURCES}}


def alert_id(source, alert):
    return alert.get("alert_id") if source == "dwd" else alert.get("properties", {}).get("id")


def active(settings, source, fixture_alerts):
    """The alerts `source` serves now (copies)."""
    alerts = settings["warnings"][source]
    return copy.deepcopy(fixture_alerts if alerts is None else alerts)


def served(settings, source, fixture_alerts):
    """The alerts `source` answers with now: `active`'s, with "expires_in" made "expires"."""
    alerts = active(settings, source, fixture_alerts)
    for alert in alerts:
        fields = alert if source == "dwd" else alert.get("properties", {})
        seconds = fields.pop("expires_in", None)
        if isinstance(seconds, (int, float)):
            moment = math.ceil(time.time() + seconds)
            fields["expires"] = datetime.datetime.fromtimestamp(moment, datetime.timezone.utc).isoformat()
    return alerts


def parse_warnings(body, settings, fixture_alerts):
    """The settings changed by a /-/warnings body; raises ValueError for a bad one."""
    source = body.get("source")
    if source not in SOURCES:
        raise ValueError(f"'source' must be one of {', '.join(SOURCES)}, got {source!r}")
    actions = set(body) - {"source"}
    if len(actions) != 1 or not actions <= {"alerts", "update", "fail"}:
        raise ValueError("give exactly one of alerts, update, fail")
    warnings = dict(settings["warnings"])
    fail = dict(settings["warnings_fail"])
    revision = dict(settings["warnings_revision"])
    if "alerts" in body:
        alerts = body["alerts"]
        if alerts is not None and not (isinstance(alerts, list) and all(isinstance(a, dict) for a in alerts)):
            raise ValueError("'alerts' must be a list of objects or null")
        warnings[source] = alerts
        revision[source] += 1
    elif "update" in body:
        update = body["update"]
        if not isinstance(update, dict) or not isinstance(update.get("set"), dict):
            raise ValueError("'update' must be {\"id\": ID, \"set\": {...}}")
        alerts = active(settings, source, fixture_alerts[source])
        matching = [alert for alert in alerts if alert_id(source, alert) == update.get("id")]
        if not matching:
            raise ValueError(f"no active {source} alert has id {update.get('id')!r}")
        for alert in matching:
            (alert if source == "dwd" else alert.setdefault("properties", {})).update(update["set"])
        warnings[source] = alerts
        revision[source] += 1
    else:
        status = body["fail"]
        if status is not None and status not in ERROR_STATUSES:
            raise ValueError(f"'fail' must be one of {ERROR_STATUSES} or null, got {status!r}")
        if status is None:
            fail.pop(source, None)
        else:
            fail[source] = status
    return {"warnings": warnings, "warnings_fail": fail, "warnings_revision": revision}


def point(text_latitude, text_longitude):
    """(lat, lon) as floats, or None when either is not a plain decimal in range."""
    if not (COORDINATE.match(text_latitude or "") and COORDINATE.match(text_longitude or "")):
        return None
    latitude, longitude = float(text_latitude), float(text_longitude)
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None
    return latitude, longitude
