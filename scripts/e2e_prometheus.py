#!/usr/bin/env python3
"""End-to-end proof with a real Prometheus, run by scripts/e2e-prometheus (which installs the
tools first). Everything runs on 127.0.0.1 with ports picked at run time, without internet, and
is stopped on exit:
  1. the fake Open-Meteo (Tests/Fakes/fake_weather.py), which the checks steer over HTTP;
  2. cloudy_exporter on a 4-place config refreshing every second, air quality on, each place in
     its own units (PLACE_UNITS: every temperature and wind unit family is some place's);
  3. Prometheus (Debian's /usr/bin/prometheus) scraping it every second with the shipped
     rules of deploy/prometheus/rules/, unmodified;
  4. the dashboard's variables as Grafana would ask them (datasource: every panel reads
     ${datasource}; job, instance incl. "All", place through label_values), then every panel
     query of grafana/dashboards/cloudy.json through Prometheus' HTTP API for every job,
     instance and place: each returns data, and a quantity offered in several unit families
     has data in exactly the place's own, with the matching Grafana unit (upstream errors are
     induced first, so the error panel has something to show). Families a place may lack while
     all is well (SOMETIMES_ABSENT: official warnings, pollen) may be empty for a place but must
     have data for some place;
  4a. official warnings (DWD and NWS at the fake): a severe DWD warning for Berlin makes the
     shipped CloudyOfficialWarning fire for Berlin only, with severity="warning" and the sender;
     New York (NWS, no warning) is asked and has none; London and Oslo are in no source's area;
  5. tomorrow's minimum at -5 °C for one place: the shipped frost alert (no `for:`) is firing
     for that place only, within FIRING_BUDGET seconds of the override; back at 5 °C, it keeps
     firing (keep_firing_for); every shipped rule group is loaded and evaluates cleanly;
  5b. per-place thresholds (THRESHOLD_PLACES): Berlin has `alerts: {frost: "3 °C", heat: off}`,
     Oslo (°F only) the defaults; both forecast a 2 °C minimum and a 45 °C maximum tomorrow:
     the frost alert fires for Berlin only, the heat alert for Oslo only, its text in °F;
  5c. air quality (`air_quality:` from the same fake, whose European index peaks at 64 for every
     place): CloudyAirQualityForecast fires for Berlin (`alerts: {air_quality: 60}`) and for no
     place on the default 100;
  6. three exporters with --shard=0/3, 1/3, 2/3 on a 12-place config: each says its shard on
     cloudy_exporter_shard_info, and each place is on one shard;
  7. TLS (docs/web-config.md): certificates made now by Tests/Support/make-test-certificates
     (openssl), a password hashed by htpasswd; one exporter with TLS and basic_auth_users, one
     with mutual TLS (RequireAndVerifyClientCert, client_allowed_sans). A second Prometheus
     scrapes them over https, one job with basic_auth (password_file), one with a client
     certificate: both up, with weather in them; a job without the login is down with 401 and
     one with another CA's certificate is down; no password or hash in the exporters' logs.
One line per check ("ok   …" or "FAIL …"), then "e2e-prometheus: N passed, M failed"; exits
non-zero on a failure and then prints the tail of every log.

The exporter is $CLOUDY_EXPORTER, else .build/debug/cloudy_exporter (built if missing or too old
to know --shard). KEEP_TMP=1 keeps the temporary directory (configs, logs, TSDB). The processes,
ports and waits come from the test harness, Tests/Support/cloudy_harness.

Python 3.11 standard library, plus PyYAML (scripts/install-deps --test) to read the rules files.
"""

import base64
import json
import math
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "Support"))
from cloudy_harness import (DEBUG_EXPORTER, REPO_ROOT, Exporter, FakeWeather, dwd_alert, exporter_binary,  # noqa: E402
                            exposition, fetch, free_port, in_repo, poll, scratch_dir, shown, spawn, stop_all,
                            wait_ok, write_exporter_config)

PROMETHEUS = "/usr/bin/prometheus"
FIRING_BUDGET = 15  # seconds from the frost override until the alert must be firing
TIME_BUDGET = 90  # seconds for the whole run, a build of the exporter not counted
HTTP_TIMEOUT = 5  # seconds; every request is local, so anything slower is a failure
POLL = 0.25  # seconds between polls of Prometheus

# St. John's: Grafana's own escaping of a name with an apostrophe matched nothing (see substitute).
MAIN_PLACES = [("Berlin", 52.52, 13.41), ("London", 51.51, -0.13), ("New York", 40.71, -74.01),
               ("Oslo", 59.91, 10.75), ("St. John's", 47.56, -52.71)]
SHARDED_PLACES = MAIN_PLACES + [
    ("Paris", 48.85, 2.35), ("Madrid", 40.42, -3.70), ("Rome", 41.90, 12.50), ("Vienna", 48.21, 16.37),
    ("Warsaw", 52.23, 21.01), ("Tokyo", 35.68, 139.69), ("Sydney", -33.87, 151.21), ("Nairobi", -1.29, 36.82),
]

passed = 0
failures = 0


def ok(text):
    global passed
    passed += 1
    print(f"ok   {text}", flush=True)


def fail(text):
    global failures
    failures += 1
    print(f"FAIL {text}", flush=True)


class Fatal(Exception):
    """A prerequisite is missing: the later phases cannot run (its FAIL line is printed)."""


class ExporterConfig(NamedTuple):
    path: Path
    places: list
    units: dict


# --- HTTP ---------------------------------------------------------------------------------


def http_text(url):
    """The body of GET `url` as text; RuntimeError unless 2xx."""
    answer = fetch(url, timeout=HTTP_TIMEOUT)
    if not 200 <= answer.status < 300:
        raise RuntimeError(f"{url.split('?')[0]}: HTTP {answer.status}: {answer.text[:300]}")
    return answer.text


class PromError(Exception):
    pass


class NoData(PromError):
    """The query was answered, with no sample."""


def prom(base, path, **params):
    """`data` of a Prometheus API answer; PromError unless status is success."""
    url = f"{base}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        answer = json.loads(http_text(url))
    except (RuntimeError, OSError, ValueError) as error:
        raise PromError(str(error)) from None
    if answer.get("status") != "success":
        raise PromError(f"{answer.get('errorType')}: {answer.get('error')}")
    return answer["data"]


def instant(base, expr):
    return prom(base, "/api/v1/query", query=expr)["result"]


# --- wait-target, wait-query, rules -----------------------------------------------------------


def wait_target(prometheus, job, timeout):
    """Until Prometheus reports every target of `job` healthy; False when it does not in time."""
    def healthy():
        try:
            targets = prom(prometheus, "/api/v1/targets", state="active")["activeTargets"]
        except PromError:
            return None
        mine = [t for t in targets if t["labels"].get("job") == job]
        return mine if mine and all(t["health"] == "up" for t in mine) else None

    started = time.monotonic()
    targets = poll(healthy, timeout, POLL)
    if targets:
        urls = ", ".join(t["scrapeUrl"] for t in targets)
        ok(f"Prometheus scrapes job {job} ({urls}): up after {time.monotonic() - started:.1f}s")
        return True
    fail(f"Prometheus target of job {job} not up within {timeout:g}s")
    return False


def wait_query(prometheus, expr, timeout, what):
    """Until an instant query returns at least one sample."""
    def answer():
        try:
            return instant(prometheus, expr)
        except PromError:
            return None

    started = time.monotonic()
    result = poll(answer, timeout, POLL)
    if result:
        ok(f"{what}: after {time.monotonic() - started:.1f}s ({expr})")
    else:
        fail(f"{what}: no data within {timeout:g}s ({expr})")


def rules(prometheus, directory):
    """Each shipped rules file's groups are loaded, and no rule has an evaluation error."""
    wanted = {}
    for path in sorted(Path(directory).glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            wanted[group["name"]] = len(group["rules"])
    groups = {g["name"]: g for g in prom(prometheus, "/api/v1/rules")["groups"]}
    for name, count in wanted.items():
        group = groups.get(name)
        if group is None:
            fail(f"rule group {name} is not loaded")
            continue
        broken = [f"{r['name']}: {r.get('lastError') or r['health']}" for r in group["rules"] if r["health"] != "ok"]
        if len(group["rules"]) != count:
            fail(f"rule group {name}: {len(group['rules'])} rules loaded, the file has {count}")
        elif broken:
            fail(f"rule group {name}: rules not evaluating cleanly: {'; '.join(broken)}")
        else:
            ok(f"rule group {name}: {count} rules loaded, every one evaluated without error")


# --- panels -----------------------------------------------------------------------------------

# Grafana's built-in interval variables, as Grafana would fill them for a short time range.
BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__range": "5m", "__range_s": "300", "__interval_ms": "15000"}
# $var, ${var}, ${var:format} and the deprecated [[var]].
VARIABLE = re.compile(r"\$\{(\w+)(?::(\w+))?\}|\$(\w+)|\[\[(\w+)\]\]")
# The dashboard's variables with an "All" (Grafana regex-escapes their values, see substitute).
INCLUDE_ALL = {"instance"}


def promql_string(value):
    """A value inside a double-quoted PromQL string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def substitute(expr, values):
    """expr with dashboard and built-in variables filled in as Grafana's Prometheus data source
    fills them; KeyError names an unknown variable, ValueError an unknown format.

    `${var:regex}` is Grafana's regex format (its `escapeRegex`), whatever the data source.
    Without a format the data source's own escaping applies (`interpolateQueryExpr`, without the
    `prometheusSpecialCharsInLabelValues` toggle): for a variable without "All" only `\\` and `'`
    are escaped, the latter wrongly for a double-quoted PromQL string (`'` becomes `\\\\'`), so a
    place named "St. John's" matches nothing as `location="$place"`; for one with "All", regex
    specials too. "All" is the allValue as it is.
    """
    out, last = [], 0
    for match in VARIABLE.finditer(expr):
        name = match.group(1) or match.group(3) or match.group(4)
        form = match.group(2)
        if name in BUILTINS:
            value = BUILTINS[name]
        elif values.get(name) == "$__all":
            value = ".+"  # Grafana puts a variable's allValue in as it is
        else:
            value = values[name]  # KeyError: a variable this script does not know
            if form == "regex":
                value = re.sub(r"[\\^$*+?.()|\[\]{}/]", lambda m: "\\" + m.group(0), value)
            elif form is not None:
                raise ValueError(f"${{{name}:{form}}}: a format this script does not fill")
            elif name in INCLUDE_ALL:
                value = value.replace("\\", "\\\\\\\\").replace("'", "\\\\\\\\'")
                value = re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value)
            else:
                value = value.replace("\\", "\\\\").replace("'", "\\\\'")
        out.append(expr[last : match.start()])
        out.append(value)
        last = match.end()
    out.append(expr[last:])
    return "".join(out)


def dashboard_variables(expr):
    return {m.group(1) or m.group(3) or m.group(4) for m in VARIABLE.finditer(expr)} - set(BUILTINS)


def walk_panels(panels):
    for panel in panels:
        yield panel
        yield from walk_panels(panel.get("panels", []))  # rows, collapsed or not


def run_target(base, target, expr, range_seconds):
    """Describes the data of one target, e.g. 'A=7' or 'A=1/61pts'; raises PromError if empty."""
    ref = target.get("refId", "?")
    is_instant = target.get("instant") and not target.get("range")
    if is_instant:
        result = instant(base, expr)
        values = [s["value"][1] for s in result]
        shape = f"{ref}={len(result)}"
    else:
        end = time.time()
        result = prom(base, "/api/v1/query_range", query=expr, start=f"{end - range_seconds:.3f}",
                      end=f"{end:.3f}", step="2")["result"]
        values = [v[1] for s in result for v in s["values"]]
        shape = f"{ref}={len(result)}/{len(values)}pts"
    if not result or not values:
        raise NoData(f"{ref}: no data")
    if all(math.isnan(float(v)) for v in values):
        raise PromError(f"{ref}: only NaN")
    return shape


# The order in which a panel picks a place's unit family when the place has several (the
# dashboard's targets keep a family only where no earlier one exists), and each family's
# Grafana unit.
TEMPERATURE_UNITS = ["celsius", "fahrenheit"]
WIND_UNITS = ["meters_per_second", "kilometers_per_hour", "miles_per_hour", "knots"]
GRAFANA_UNITS = {"celsius": "celsius", "fahrenheit": "fahrenheit", "meters_per_second": "velocityms",
                 "kilometers_per_hour": "velocitykmh", "miles_per_hour": "velocitymph", "knots": "velocityknot"}
UNIT_REF = re.compile(r"^(\w+)_(%s)$" % "|".join(GRAFANA_UNITS))
ALL = "$__all"  # the instance variable's "All", which Grafana fills with its allValue unescaped

# Families a place lacks while all is well: a target reading only these may be empty for a
# place, but must have data for some place of the run.
SOMETIMES_ABSENT = [
    (re.compile(r"^weather_warning"), "only where a warning source covers the place; each warning while in force"),
    (re.compile(r"^weather_(forecast_daily_)?pollen_"), "pollen is Europe only, in season"),
]
EXPORTER_FAMILY = re.compile(r"\b(?:weather|cloudy_exporter)_\w+")


def absence_reason(expr):
    """Why a target may be empty for a place (a family it may lack while all is well), or None."""
    families = set(EXPORTER_FAMILY.findall(expr))
    reasons = {reason for family in families for pattern, reason in SOMETIMES_ABSENT if pattern.search(family)}
    if families and len(reasons) == 1 and all(any(p.search(f) for p, _ in SOMETIMES_ABSENT) for f in families):
        return reasons.pop()
    return None


def label_values(prometheus, query):
    """Grafana's label_values(SELECTOR, LABEL) through Prometheus' label API."""
    match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query.strip())
    if not match:
        raise PromError(f"not a label_values() query: {query}")
    return sorted(prom(prometheus, f"/api/v1/label/{match.group(2)}/values", **{"match[]": match.group(1)}))


def shown_unit(place_units, kind):
    """The unit family a panel shows for a place: the first of its configured ones in panel order."""
    order = TEMPERATURE_UNITS if kind == "temperature" else WIND_UNITS
    configured = place_units[kind]
    return next(unit for unit in order if unit in configured)


def panel_units(panel):
    """refId -> Grafana unit: the default, or an override by frame refId or by table column."""
    default = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
    units = {t.get("refId"): default for t in panel.get("targets", [])}
    for override in panel.get("fieldConfig", {}).get("overrides", []):
        matcher = override.get("matcher", {})
        ref = matcher.get("options") if matcher.get("id") == "byFrameRefID" else None
        if matcher.get("id") == "byName" and str(matcher.get("options", "")).startswith("Value #"):
            ref = matcher["options"][len("Value #"):]
        for prop in override.get("properties", []):
            if ref in units and prop.get("id") == "unit":
                units[ref] = prop["value"]
    return units


def variables(prometheus, dashboard, config, instances):
    """The datasource, job, instance and place variables, asked of Prometheus as Grafana would:
    returns {job: {instance choice: [places]}} to fill the panel queries with."""
    templating = {v["name"]: v for v in dashboard.get("templating", {}).get("list", [])}
    query = lambda name: (templating[name]["query"]["query"] if isinstance(templating[name].get("query"), dict)
                          else templating[name].get("query"))

    # datasource: every panel and target reads through it, so this Prometheus is what they ask.
    ds = templating.get("datasource", {})
    fixed = sorted({str(p.get("id")) for p in walk_panels(dashboard.get("panels", []))
                    for holder in [p] + p.get("targets", [])
                    if holder.get("datasource") and holder["datasource"].get("uid") != "${datasource}"}
                   | {name for name, v in templating.items()
                      if v.get("type") == "query" and v["datasource"].get("uid") != "${datasource}"})
    if ds.get("type") == "datasource" and ds.get("query") == "prometheus" and not fixed:
        ok("variable datasource (type prometheus): every panel, target and variable reads ${datasource}, "
           "here the Prometheus under test")
    else:
        fail(f"variable datasource: type {ds.get('type')} query {ds.get('query')}; fixed datasources in {fixed}")

    jobs = label_values(prometheus, query("job"))
    (ok if jobs == ["cloudy"] else fail)(f"variable job = {query('job')}: {jobs}")
    all_value = templating["instance"].get("allValue")
    if not templating["instance"].get("includeAll") or all_value != ".+":
        fail(f'variable instance: includeAll {templating["instance"].get("includeAll")} allValue {all_value!r}, '
             f'want an "All" of .+')
    names = sorted(name for name, _, _ in config.places)
    out = {}
    for job in jobs:
        found = label_values(prometheus, substitute(query("instance"), {"job": job}))
        (ok if found == sorted(instances) else fail)(
            f"variable instance = {substitute(query('instance'), {'job': job})}: {found}, want {sorted(instances)}")
        out[job] = {}
        for instance in found + [ALL]:
            place_query = substitute(query("place"), {"job": job, "instance": instance})
            places = label_values(prometheus, place_query)
            (ok if places == names else fail)(f"variable place = {place_query}: {', '.join(places)}")
            out[job][instance] = places
    return out


def panels(prometheus, dashboard_path, config, instances, range_seconds=60):
    """Every panel query of the Grafana dashboard returns data for every job, instance and place;
    a quantity offered in several unit families (one target each) has data in exactly one, the
    place's own, shown in that family's Grafana unit."""
    dashboard = json.loads(Path(dashboard_path).read_text())
    choices = variables(prometheus, dashboard, config, instances)

    # The dashboard's place selector, a regex of Grafana's escaping in a raw string (whatever
    # escaping the data source would apply), picks the place's series and no other.
    for name, _, _ in config.places:
        expr = substitute('weather_location_info{location=~`${place:regex}`}', {"place": name})
        got = [s["metric"]["location"] for s in instant(prometheus, expr)]
        (ok if got == [name] else fail)(f'regex-style {expr} selects {got}')

    combinations = [{"job": job, "instance": instance, "place": place}
                    for job, by_instance in choices.items() for instance, places in by_instance.items()
                    for place in places]
    for panel in walk_panels(dashboard.get("panels", [])):
        targets = [t for t in panel.get("targets", []) if t.get("expr") and not t.get("hide")]
        if not targets:
            continue  # rows, text panels
        label = f'panel {panel.get("id")} "{panel.get("title", "")}"'
        used = sorted(set().union(*(dashboard_variables(t["expr"]) for t in targets)))
        unknown = [name for name in used if name not in ("job", "instance", "place")]
        if unknown:
            fail(f"{label}: uses variables this script cannot fill: {unknown}")
            continue
        units = panel_units(panel)
        seen = set()
        sometimes = {}  # refId -> (reason, whether some place had data), for SOMETIMES_ABSENT targets
        for combination in combinations:
            values = {k: v for k, v in combination.items() if k in used}
            key = tuple(sorted(values.items()))
            if key in seen:
                continue  # a panel without $place: once per job and instance
            seen.add(key)
            place_units = config.units.get(values.get("place"))
            where = " ".join(f"{k}={'All' if v == ALL else v}" for k, v in values.items())
            shapes, errors, families = [], [], {}
            for target in targets:
                ref = target.get("refId", "?")
                expr = substitute(target["expr"], values)
                family = UNIT_REF.match(ref)
                reason = absence_reason(target["expr"])
                try:
                    shapes.append(run_target(prometheus, target, expr, range_seconds))
                    has_data = True
                except NoData as error:
                    has_data = False
                    if reason:
                        shapes.append(f"{ref}=empty")
                    elif not family:
                        errors.append(f"{error} in {expr}")
                except PromError as error:
                    has_data = False
                    errors.append(f"{error} in {expr}")
                if reason:
                    sometimes[ref] = (reason, sometimes.get(ref, (reason, False))[1] or has_data)
                if family:
                    families.setdefault(family.group(1), []).append((family.group(2), has_data, ref))
            for quantity, options in families.items():
                with_data = [unit for unit, has_data, _ in options if has_data]
                kind = "temperature" if options[0][0] in TEMPERATURE_UNITS else "wind_speed"
                want = shown_unit(place_units, kind) if place_units else None
                refs = {unit: ref for unit, _, ref in options}
                # A threshold that is `off` for the place has no series, so nothing to draw.
                alert = quantity.removeprefix("threshold_") if quantity.startswith("threshold_") else None
                if alert and PLACE_ALERTS.get(values.get("place"), {}).get(alert) == "off":
                    if with_data:
                        errors.append(f"{quantity}: data in {with_data} though {alert} is off for the place")
                    else:
                        shapes.append(f"[{quantity} off]")
                    continue
                if with_data != [want]:
                    errors.append(f"{quantity}: data in {with_data or 'no'} unit family, want only {want}")
                elif units.get(refs[want]) != GRAFANA_UNITS[want]:
                    errors.append(f"{quantity}: {want} shown in Grafana unit {units.get(refs[want])}, "
                                  f"want {GRAFANA_UNITS[want]}")
                else:
                    shapes.append(f"[{quantity} in {want}]")
            if errors:
                fail(f"{label} {where}: {'; '.join(errors)}")
            elif shapes:
                ok(f"{label} {where}: {' '.join(shapes)}")
        for ref, (reason, had_data) in sorted(sometimes.items()):
            (ok if had_data else fail)(f"{label} target {ref}: " + (
                f"data for some place (others may have none: {reason})" if had_data
                else f"no data for any place ({reason}): give one place of the run some"))


# --- frost ------------------------------------------------------------------------------------

FROST_ALERT = "CloudyFrostForecast"


def request_indexes(fake, places):
    """{place name: its index in the exporter's last weather request}: the fake's override
    addresses a place by that index."""
    # The warning services' asks (/alerts…) go to the same fake: the forecast requests only.
    requests = [r for r in fake.requests()["requests"] if r["path"] == "/v1/forecast"]
    if not requests:
        raise RuntimeError("the fake has no weather request to learn the place order from")
    query = requests[-1]["query"]
    coordinates = list(zip(map(float, query["latitude"].split(",")), map(float, query["longitude"].split(","))))
    indexes = {}
    for index, (lat, lon) in enumerate(coordinates):
        matches = [name for name, plat, plon in places if abs(plat - lat) < 1e-6 and abs(plon - lon) < 1e-6]
        if len(matches) != 1:
            raise RuntimeError(f"request place {index} at {lat},{lon} is not one configured place ({matches})")
        indexes[matches[0]] = index
    return indexes


def frost(prometheus, fake, places, firing_budget):
    """Tomorrow's minimum of one place (not one of THRESHOLD_PLACES) at -5 °C: the frost alert
    fires for that place only, within the budget; back at 5 °C, it stays firing (keep_firing_for)."""
    names = [name for name, _, _ in places]
    indexes = request_indexes(fake, places)
    candidates = sorted((index, name) for name, index in indexes.items() if name not in THRESHOLD_PLACES)
    if not candidates:
        fail(f"frost: every place of the last weather request is one of {THRESHOLD_PLACES}")
        return
    index, place = candidates[0]
    others = [name for name in names if name != place]

    # Daily index 1 is tomorrow; values are °C like the real API's default.
    fake.override(place=index, daily={"temperature_2m_min": [10.0, -5.0]})
    started = time.monotonic()

    def left():
        """Seconds of the firing budget not yet used since the override."""
        return max(0.0, firing_budget - (time.monotonic() - started))

    # The next refresh (1s) and the next scrape (1s) bring it to Prometheus.
    def frosty():
        try:
            return instant(prometheus, 'weather_forecast_daily_temperature_min_celsius{job="cloudy"} < 0')
        except PromError:
            return None

    below = poll(frosty, left(), POLL)
    got = sorted((s["metric"]["location"], s["metric"]["day"], float(s["value"][1])) for s in below or [])
    if got == [(place, "1", -5.0)]:
        fahrenheit = instant(prometheus,
                             f'weather_forecast_daily_temperature_min_fahrenheit{{location="{promql_string(place)}",day="1"}}')
        value = float(fahrenheit[0]["value"][1]) if fahrenheit else None
        if value is not None and abs(value - 23.0) < 1e-9:
            ok(f"override: tomorrow's minimum in {place} is -5 °C / 23 °F in Prometheus after "
               f"{time.monotonic() - started:.1f}s; no other place or day below 0 °C")
        else:
            fail(f"override: {place} day 1 in °F is {value}, want 23")
    else:
        fail(f"override: daily minimums below 0 °C in Prometheus are {got}, want [({place!r}, '1', -5.0)] "
             f"within {firing_budget:.0f}s")
        return

    # The shipped rule fires on its first evaluation (no `for:`) and holds for keep_firing_for.
    def frost_rule():
        return next((r for g in prom(prometheus, "/api/v1/rules")["groups"] for r in g["rules"]
                     if r.get("name") == FROST_ALERT and r.get("type") == "alerting"), None)

    rule = frost_rule()
    if rule is None:
        fail(f"{FROST_ALERT}: no such alerting rule loaded")
        return
    hold, keep = float(rule.get("duration", 0)), float(rule.get("keepFiringFor", 0))
    timing = f"for: {hold:.0f}s, keep_firing_for: {keep:.0f}s"

    def frost_alerts():
        try:
            alerts = prom(prometheus, "/api/v1/alerts")["alerts"]
        except PromError:
            return None
        return [a for a in alerts if a["labels"].get("alertname") == FROST_ALERT]

    def firing():
        alerts = frost_alerts() or []
        mine = [a for a in alerts if a["labels"].get("location") == place and a["state"] == "firing"]
        return alerts if mine else None

    alerts = poll(firing, left(), POLL) or frost_alerts() or []
    mine = [a for a in alerts if a["labels"].get("location") == place]
    if [a["state"] for a in mine] == ["firing"] and mine[0]["labels"].get("day") == "1":
        alert = mine[0]
        labels, annotations = alert["labels"], alert["annotations"]
        ok(f"{FROST_ALERT} is firing for {place} day=1 (activeAt {alert.get('activeAt')}, value {alert.get('value')}) "
           f"{time.monotonic() - started:.1f}s after the override, within the {firing_budget:.0f}s budget ({timing})")
        problems = []
        if labels.get("severity") != "warning" or labels.get("category") != "weather":
            problems.append(f"labels {labels}")
        if annotations.get("summary") != f"Frost forecast in {place} tomorrow":
            problems.append(f"summary {annotations.get('summary')!r}")
        description = annotations.get("description", "")
        if "is -5 °C," not in description or "frost threshold of 0 °C" not in description:
            problems.append(f"description {description!r}")
        if problems:
            fail(f"{FROST_ALERT} for {place}: unexpected {'; '.join(problems)}")
        else:
            ok(f'{FROST_ALERT} for {place}: severity=warning category=weather, summary "{annotations["summary"]}", '
               f'description says -5 °C and the 0 °C threshold')
    else:
        fail(f"{FROST_ALERT} for {place}: states {[(a['labels'].get('day'), a['state']) for a in mine]} "
             f"{time.monotonic() - started:.1f}s after the override, want one alert, day=1, firing within "
             f"{firing_budget:.0f}s (the rule has {timing})")
        alert = None

    # Nothing for the other places, neither in /api/v1/alerts nor in the ALERTS series.
    elsewhere = sorted({a["labels"].get("location") for a in alerts} - {place})
    series = instant(prometheus, f'ALERTS{{alertname="{FROST_ALERT}"}}')
    in_series = sorted({s["metric"].get("location") for s in series} - {place})
    if not elsewhere and not in_series and len(series) == 1:
        ok(f"{FROST_ALERT} is neither pending nor firing for {', '.join(others)} "
           f"(/api/v1/alerts and ALERTS{{alertname=\"{FROST_ALERT}\"}} hold only {place})")
    else:
        fail(f"{FROST_ALERT} also active elsewhere: alerts {elsewhere}, ALERTS series "
             f"{[s['metric'] for s in series]}")
    if alert is None:
        return

    # keep_firing_for: the forecast goes back above 0 °C, and the alert stays firing (same
    # activeAt: not resolved and fired again) through evaluations that no longer match.
    fake.override(place=index, daily={"temperature_2m_min": [10.0, 5.0]})
    recovered_at = time.monotonic()
    tomorrow = f'weather_forecast_daily_temperature_min_celsius{{job="cloudy",location="{promql_string(place)}",day="1"}}'

    def mild():
        try:
            return instant(prometheus, f"{tomorrow} >= 0")
        except PromError:
            return None

    back = poll(mild, 15, POLL)
    if not back:
        fail(f"recovery: tomorrow's minimum in {place} is not back above 0 °C in Prometheus within 15s")
        return
    seen = float(back[0]["value"][0])  # Prometheus' time of that query

    # Wait for a few evaluations that have seen the recovered value (evaluation_interval 1s).
    def evaluated_since():
        last = (frost_rule() or {}).get("lastEvaluation")
        return bool(last) and datetime.fromisoformat(last).timestamp() > seen + 3

    if not poll(evaluated_since, 10, POLL):
        fail(f"{FROST_ALERT}: not evaluated in the 10s after the forecast went back to 5 °C")
        return
    held = [a for a in frost_alerts() or [] if a["labels"].get("location") == place]
    matching = instant(prometheus, f'({tomorrow} < ignoring(day, alert) group_left() '
                                   f'weather_alert_threshold_celsius{{alert="frost"}})')
    if ([a["state"] for a in held] == ["firing"] and held[0].get("activeAt") == alert.get("activeAt")
            and not matching):
        ok(f"{FROST_ALERT} still firing for {place} (same activeAt) {time.monotonic() - recovered_at:.1f}s after "
           f"the forecast went back to 5 °C, held by keep_firing_for: {keep:.0f}s")
    else:
        fail(f"{FROST_ALERT} for {place} after the forecast went back to 5 °C: states "
             f"{[(a['state'], a.get('activeAt')) for a in held]}, want firing since {alert.get('activeAt')} "
             f"(rule has {timing}; frost condition still matching: {bool(matching)})")


# --- official warnings --------------------------------------------------------------------------

WARNING_ALERT = "CloudyOfficialWarning"
WARNING_PLACE = "Berlin"  # inside DWD's area; New York is inside NWS's, London and Oslo in none asked


def warning_settings(fake_url):
    """The main run's `warnings:`: DWD and NWS at the fake, asked every second."""
    return {"interval": "1s", "sources": [{"name": "dwd", "url": fake_url}, {"name": "nws", "url": fake_url}]}


def arm_warnings(fake):
    """A severe DWD warning in force for two hours (so Berlin has one), none from NWS (so New York
    is asked and has none), before the exporter starts."""
    fake.warnings("dwd", [dwd_alert("e2e-dwd-1", "severe", time.time() + 7200)])
    fake.warnings("nws", [])
    ok("fake DWD lists a severe storm warning; fake NWS lists none")


def official_warnings(prometheus, firing_budget):
    """The shipped warning rule fires for the place under a warning, with the alert severity
    derived from the warning's (severe → warning), the sender the exporter labels in its texts, and for no
    other place; the place NWS answers for with no warning is asked (up) and has no alert."""
    def alerts():
        try:
            return [a for a in prom(prometheus, "/api/v1/alerts")["alerts"]
                    if a["labels"].get("alertname") == WARNING_ALERT]
        except PromError:
            return None

    started = time.monotonic()
    found = poll(lambda: [a for a in alerts() or [] if a["state"] == "firing"] or None, firing_budget, POLL) or []
    mine = [a for a in found if a["labels"].get("location") == WARNING_PLACE]
    others = sorted({a["labels"].get("location") for a in alerts() or []} - {WARNING_PLACE})
    if len(mine) != 1:
        fail(f"{WARNING_ALERT}: firing for {[a['labels'].get('location') for a in found]} within "
             f"{firing_budget:.0f}s, want {WARNING_PLACE} once")
        return
    labels, annotations = mine[0]["labels"], mine[0]["annotations"]
    # The texts an update rewrites are annotations, not labels: one alert across updates.
    want = {"severity": "warning", "warning_severity": "severe", "category": "official_warning", "source": "dwd",
            "id": "e2e-dwd-1", "event": "storm", "sender": None, "headline": None, "urgency": None}
    wrong = {k: labels.get(k) for k, v in want.items() if labels.get(k) != v}
    if wrong or annotations.get("sender") != "Deutscher Wetterdienst" or not annotations.get("expires"):
        fail(f"{WARNING_ALERT} for {WARNING_PLACE}: labels {wrong} differ from {want}, annotations {annotations}")
    else:
        ok(f"{WARNING_ALERT} firing for {WARNING_PLACE} {time.monotonic() - started:.1f}s in: severity=warning "
           f"for a severe warning, sender \"{annotations['sender']}\", expires {annotations['expires']}")
    (ok if not others else fail)(f"{WARNING_ALERT} for no other place (active elsewhere: {others})")
    asked = {s["metric"]["location"]: s["value"][1] for s in instant(prometheus, 'weather_warnings_up{job="cloudy"}')}
    (ok if asked == {"Berlin": "1", "New York": "1"} else fail)(
        f"weather_warnings_up: {asked}, want Berlin (dwd) and New York (nws) up, London and Oslo never asked")


# --- per-place thresholds -----------------------------------------------------------------------

# (the place with overrides, the place with the defaults); their `alerts:` are in write_units_config.
THRESHOLD_PLACES = ("Berlin", "Oslo")
PLACE_ALERTS = {"Berlin": {"frost": "3 °C", "heat": "off", "air_quality": 60}}


def thresholds(prometheus, fake, places, firing_budget):
    """The same forecast judged by each place's own thresholds: a 2 °C minimum and a 45 °C maximum
    tomorrow for both THRESHOLD_PLACES; frost fires for the one with frost: "3 °C" only, heat for
    the one with the defaults only (its twin has heat: off)."""
    custom, default = THRESHOLD_PLACES

    def series(expr):
        return sorted((s["metric"]["location"], s["metric"].get("alert"), float(s["value"][1]))
                      for s in instant(prometheus, expr))

    wanted = [(custom, "frost", 3.0), (default, "frost", 0.0), (default, "heat", 30.0)]
    got = series(f'weather_alert_threshold_celsius{{job="cloudy",location=~"{custom}|{default}"}}')
    if sorted(wanted) == got:
        ok(f"threshold series in Prometheus: {custom} frost 3 °C and no heat (off), {default} frost 0 °C, heat 30 °C")
    else:
        fail(f"threshold series: {got}, want {sorted(wanted)}")

    def active(alertname):
        alerts = prom(prometheus, "/api/v1/alerts")["alerts"]
        return {a["labels"].get("location"): a for a in alerts if a["labels"].get("alertname") == alertname}

    before = active("CloudyHeatForecast")
    if default in before or custom in before:
        fail(f"heat: already active before the override for {sorted(set(before) & set(THRESHOLD_PLACES))}")
        return
    indexes = request_indexes(fake, places)
    for name in THRESHOLD_PLACES:
        fake.override(place=indexes[name], daily={"temperature_2m_min": [10.0, 2.0], "temperature_2m_max": [20.0, 45.0]})
    started = time.monotonic()

    def both_firing():
        frost, heat = active("CloudyFrostForecast"), active("CloudyHeatForecast")
        mine = frost.get(custom), heat.get(default)
        return (frost, heat) if all(a and a["state"] == "firing" for a in mine) else None

    fired = poll(both_firing, firing_budget, POLL)
    if not fired:
        fail(f"frost for {custom} and heat for {default} not both firing within {firing_budget}s of the override")
        return
    frost_alerts, heat_alerts = fired
    description = frost_alerts[custom]["annotations"].get("description", "")
    if "is 2 °C," in description and "frost threshold of 3 °C" in description:
        ok(f"CloudyFrostForecast firing for {custom} (threshold 3 °C) {time.monotonic() - started:.1f}s after "
           f"the override: {description!r}")
    else:
        fail(f"CloudyFrostForecast for {custom}: description {description!r}, want 2 °C and the 3 °C threshold")
    # The default place exposes only °F: its text speaks °F, the threshold converted (30 °C = 86 °F).
    description = heat_alerts[default]["annotations"].get("description", "")
    if "is 113 °F," in description and "heat threshold of 86 °F" in description:
        ok(f"CloudyHeatForecast firing for {default} (default 30 °C, the place in °F): {description!r}")
    else:
        fail(f"CloudyHeatForecast for {default}: description {description!r}, want 113 °F and the 86 °F threshold")

    # Both forecasts are in Prometheus and the rules have evaluated them: the twins stay quiet.
    both = (f'count(weather_forecast_daily_temperature_min_celsius{{job="cloudy",location="{custom}",day="1"}} == 2)'
            f' + count((weather_forecast_daily_temperature_min_fahrenheit{{job="cloudy",location="{default}",day="1"}}'
            f' - 32) * 5 / 9 < 2.0000001)')
    if not instant(prometheus, f"({both}) == 2"):
        fail(f"the 2 °C minimum of {custom} and {default} is not in Prometheus")
        return
    frost_alerts, heat_alerts = active("CloudyFrostForecast"), active("CloudyHeatForecast")
    if default not in frost_alerts and custom not in heat_alerts:
        ok(f"no CloudyFrostForecast for {default} (2 °C is above its 0 °C default) and no CloudyHeatForecast "
           f"for {custom} (heat: off) with the same forecast")
    else:
        fail(f"frost alerts for {sorted(frost_alerts)}, heat alerts for {sorted(heat_alerts)}: "
             f"want no frost for {default} and no heat for {custom}")


def air_quality_alert(prometheus, firing_budget):
    """The fake's air-quality forecast reaches a European index of 64 every place: that fires
    CloudyAirQualityForecast for Berlin (alerts: {air_quality: 60}) and for no place on the
    default threshold of 100."""
    def active():
        alerts = prom(prometheus, "/api/v1/alerts")["alerts"]
        return {a["labels"].get("location"): a for a in alerts
                if a["labels"].get("alertname") == "CloudyAirQualityForecast" and a["state"] == "firing"}

    fired = poll(lambda: active() or None, firing_budget, POLL)
    if not fired or set(fired) != {"Berlin"}:
        fail(f"CloudyAirQualityForecast firing for {sorted(fired or {})}, want Berlin only (threshold 60; "
             f"the others keep 100)")
        return
    ok(f"CloudyAirQualityForecast firing for Berlin (threshold 60) and no other place: "
       f"{fired['Berlin']['annotations'].get('description', '')!r}")


# --- shards -----------------------------------------------------------------------------------

def locations_on(url):
    """({location of weather_location_info}, {location of any other weather_* series})."""
    info, weather = set(), set()
    for sample in exposition.samples(http_text(url)):
        if sample.name.startswith("weather_") and "location" in sample.labels:
            (info if sample.name == "weather_location_info" else weather).add(sample.labels["location"])
    return info, weather


def shards(names, urls):
    """Each place's weather_location_info is on exactly one shard's /metrics page."""
    owners = {name: [] for name in names}
    for index, url in enumerate(urls):
        shard_info = [s.labels for s in exposition.samples(http_text(url)) if s.name == "cloudy_exporter_shard_info"]
        want = {"shard_index": str(index), "shard_count": str(len(urls))}
        (ok if shard_info == [want] else fail)(
            f"shard {index}/{len(urls)}: cloudy_exporter_shard_info {shard_info}, want {[want]}")
        info, weather = locations_on(url)
        for name in info:
            owners.setdefault(name, []).append(index)
        strays = sorted(weather - info)
        if strays:
            fail(f"shard {index}/{len(urls)}: weather series for places it does not own: {strays}")
        else:
            ok(f"shard {index}/{len(urls)}: {len(info)} places ({', '.join(sorted(info)) or 'none'}), "
               f"weather series only for those")
    missing = sorted(name for name, where in owners.items() if not where)
    doubled = sorted(f"{name} on {where}" for name, where in owners.items() if len(where) > 1)
    unknown = sorted(name for name in owners if name not in names)
    if missing or doubled or unknown:
        fail(f"shards: missing {missing}, on several shards {doubled}, not configured {unknown}")
    else:
        ok(f"shards: each of the {len(names)} configured places is on exactly one of {len(urls)} shards")


# --- the run -----------------------------------------------------------------------------------


def prepare(work):
    """The exporter to run (a private copy) and the seconds spent building it."""
    if not os.access(PROMETHEUS, os.X_OK):
        raise Fatal(f"no {PROMETHEUS} after scripts/install-deps --test")
    chosen = os.environ.get("CLOUDY_EXPORTER")
    source = exporter_binary(DEBUG_EXPORTER)
    usage = subprocess.run([source, "--help"], capture_output=True, text=True).stdout if source else ""
    build_seconds = 0.0
    if "--shard" not in usage:
        if chosen:
            raise Fatal(f"$CLOUDY_EXPORTER={chosen} is not an exporter with --shard")
        print("building cloudy_exporter (missing, or too old for --shard)", flush=True)
        started = time.monotonic()
        subprocess.run(["swift", "build", "--product", "cloudy_exporter"], cwd=REPO_ROOT, check=True)
        build_seconds = time.monotonic() - started
        source = in_repo(DEBUG_EXPORTER)
    # Run a private copy: a concurrent `swift build` in this tree may relink the original while we
    # run (and could not, with ETXTBSY, while we execute it).
    binary = work / "cloudy_exporter"
    shutil.copy2(source, binary)

    def first_line(command):
        run = subprocess.run(command, capture_output=True, text=True)
        return (run.stdout + run.stderr).splitlines()[0] if (run.stdout + run.stderr).strip() else ""

    ok(f"exporter: {first_line([binary, '--version'])} (from {shown(source)}); {first_line([PROMETHEUS, '--version'])}")
    return binary, build_seconds


def start_fake(work, logs):
    try:
        fake = FakeWeather(work, start_timeout=5)
    except (RuntimeError, TimeoutError) as error:
        fail(str(error))
        raise Fatal from None
    logs.append(fake.log_path)
    ok(f"fake Open-Meteo listening on 127.0.0.1:{fake.port}")
    return fake


def start_exporter(binary, config, work, name, logs, extra_args=()):
    """An exporter logging to WORK/NAME.log, ready (/readyz 200) within 10s."""
    exporter = Exporter(binary, config.path, work, name=name, extra_args=list(extra_args))
    logs.append(exporter.log_path)
    flags = f" ({' '.join(extra_args)})" if extra_args else ""
    try:
        exporter.wait_ready(timeout=10)
    except (RuntimeError, TimeoutError) as error:
        fail(f"{name} not ready on 127.0.0.1:{exporter.port} within 10s{flags}: {error}")
        raise Fatal from None
    ok(f"{name} ready on 127.0.0.1:{exporter.port}{flags}")
    return exporter


def launch_prometheus(work, config, suffix, logs, what):
    """Debian's Prometheus on a free port with `config` (its TSDB and log named with `suffix`),
    waited for until ready; returns its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = work / f"prometheus{suffix}.log"
    logs.append(log_path)
    with open(log_path, "w") as log:
        proc = spawn([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work / ('tsdb' + suffix)}",
                      f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ok(url + "/-/ready", 15, proc)
    except (RuntimeError, TimeoutError) as error:
        fail(f"{what} not ready on 127.0.0.1:{port} within 15s: {error}")
        raise Fatal from None
    ok(f"{what} ready on 127.0.0.1:{port}")
    return url


def start_prometheus(work, exporter, logs):
    """Prometheus scraping the exporter and evaluating the shipped rules every second."""
    config = work / "prometheus.yml"
    config.write_text(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {REPO_ROOT}/deploy/prometheus/rules/*.yml
scrape_configs:
  - job_name: cloudy  # the rules and the dashboard expect job="cloudy"
    static_configs:
      - targets: ['127.0.0.1:{exporter.port}']
""")
    url = launch_prometheus(work, config, "", logs, "Prometheus")
    if not wait_target(url, "cloudy", 15):
        raise Fatal
    return url


def check_panels(prometheus, fake, config, exporter):
    # "Upstream errors by code" is empty while all is well: make three refreshes fail with 503,
    # then wait until Prometheus sees the error counter grow, as the panel's increase() will.
    # Aimed at the forecast: the warning services' asks (every second) would spend it at once.
    fake.fault("status", status=503, count=3, path="/v1/forecast")
    ok("fake answers the next 3 forecast requests with 503")
    wait_query(prometheus, 'sum by (code) (increase(cloudy_exporter_upstream_requests_total{job="cloudy",code="503"}[1m])) > 0',
               15, "upstream 503s counted in Prometheus")
    # The places are back up before we query (the fault is used up after three requests).
    wait_query(prometheus, f'count(weather_up{{job="cloudy"}} == 1) == {len(config.places)}', 10,
               "every place up again after the fault")
    panels(prometheus, REPO_ROOT / "grafana" / "dashboards" / "cloudy.json", config, [f"127.0.0.1:{exporter.port}"])
    weekdays(prometheus, REPO_ROOT / "grafana" / "dashboards" / "cloudy.json", config, f"127.0.0.1:{exporter.port}")


def weekdays(prometheus, dashboard_path, config, instance):
    """The week's weekday names each day as the place's own pages do: the weekday, in the place's
    time zone (weather_location_info's), of the day's solar noon, worked out here with zoneinfo
    from the day's sunrise and sunset. Prometheus' day_of_week is in UTC: Sunday is 0."""
    from zoneinfo import ZoneInfo
    dashboard = json.loads(Path(dashboard_path).read_text())
    week = next(p for p in walk_panels(dashboard["panels"]) if p.get("title") == "Week ahead")
    target = next(t for t in week["targets"] if t.get("refId") == "weekday")
    for name, _, _ in config.places:
        where = {"job": "cloudy", "instance": instance, "place": name}
        zone = instant(prometheus, substitute('weather_location_info{job="$job", location=~`${place:regex}`}', where))
        noons = instant(prometheus, substitute(
            '(weather_forecast_daily_sunrise_timestamp_seconds{job="$job", location=~`${place:regex}`}'
            ' + weather_forecast_daily_sunset_timestamp_seconds{job="$job", location=~`${place:regex}`}) / 2', where))
        got = {s["metric"]["day"]: int(float(s["value"][1])) for s in instant(prometheus, substitute(target["expr"], where))}
        if not zone or not noons:
            fail(f"weekdays of {name}: no zone or no sunrise/sunset to check against")
            continue
        tz = ZoneInfo(zone[0]["metric"]["timezone"])
        want = {s["metric"]["day"]: (datetime.fromtimestamp(float(s["value"][1]), tz).weekday() + 1) % 7 for s in noons}
        (ok if got == want and want else fail)(
            f"weekdays of {name} in {tz.key}: {dict(sorted(got.items()))}" + ("" if got == want else f", want {want}"))
    # The fake answers every place in its fixture's zone, where UTC's day and the place's agree:
    # promtool evaluates the same query over a day in Apia (UTC+13), whose solar noon is on the
    # day before in UTC. Monday 15 June 2026 there: sunrise 07:05 and sunset 18:20 local.
    apia = {"job": "cloudy", "instance": "apia:10150", "place": "Apia"}
    labels = '{job="cloudy", instance="apia:10150", location="Apia"'
    bergen = {"job": "cloudy", "instance": "bergen:10150", "place": "Bergen"}
    bergen_labels = '{job="cloudy", instance="bergen:10150", location="Bergen"'
    test = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [
            {"series": f'weather_forecast_daily_sunrise_timestamp_seconds{labels}, day="0"}}', "values": "1781460300"},
            {"series": f'weather_forecast_daily_sunset_timestamp_seconds{labels}, day="0"}}', "values": "1781500800"},
            {"series": f"weather_location_utc_offset_seconds{labels}}}", "values": "46800"},
        ],
        "promql_expr_test": [{"expr": substitute(target["expr"], apia), "eval_time": "0m",
                              "exp_samples": [{"labels": '{day="0"}', "value": 1}]}],
    }, {
        # Without sunrise and sunset (MET Norway, OpenWeatherMap's later days): today in the
        # place's zone plus the day's number, for the days it has. At 0m, time() is 0:
        # Thursday 1 January 1970, 01:00 in Bergen (UTC+1).
        "interval": "1m",
        "input_series": [
            {"series": f'weather_forecast_daily_condition_code{bergen_labels}, day="{day}"}}', "values": "3"}
            for day in range(3)] + [
            {"series": f"weather_location_utc_offset_seconds{bergen_labels}}}", "values": "3600"}],
        "promql_expr_test": [{"expr": substitute(target["expr"], bergen), "eval_time": "0m",
                              "exp_samples": [{"labels": f'{{day="{day}"}}', "value": 4 + day} for day in range(3)]}],
    }]}
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"cloudy-weekday-{os.getpid()}.yml"
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    try:
        result = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True)
    finally:
        path.unlink()
    (ok if result.returncode == 0 else fail)(
        "weekday of a day in Apia (UTC+13) is its own, Monday, not UTC's Sunday; without sunrise "
        "(Bergen), today's in the place's zone plus the day (promtool)"
        + ("" if result.returncode == 0 else ": " + (result.stdout + result.stderr).strip()[-600:]))


def check_shards(binary, fake, work, logs):
    path = write_exporter_config(work / "cloudy-sharded.yml", fake.url, SHARDED_PLACES,
                                 refresh={"interval": "1s", "timeout": "2s"})
    config = ExporterConfig(path, SHARDED_PLACES, {})
    fake.reset()  # no overrides or faults from the phases before
    urls = []
    for index in range(3):
        exporter = start_exporter(binary, config, work, f"shard-{index}", logs, [f"--shard={index}/3"])
        urls.append(exporter.url + "/metrics")
    shards([name for name, _, _ in SHARDED_PLACES], urls)


def tls_fetch(url, context, login=None):
    """(status, body) of GET `url` over TLS; (None, reason) when there is no answer."""
    headers = {}
    if login:
        headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT, context=context) as answer:
            return answer.status, answer.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, ""
    except (OSError, ssl.SSLError) as error:
        return None, str(error)


def start_tls_exporter(binary, config, work, name, logs, web, context, login=None):
    """An exporter with --web.config.file=`web`, answering /readyz 200 over TLS within 10s."""
    exporter = Exporter(binary, config, work, name=name, extra_args=[f"--web.config.file={web}"])
    logs.append(exporter.log_path)
    url = f"https://localhost:{exporter.port}/readyz"
    if not poll(lambda: tls_fetch(url, context, login)[0] == 200, 10, POLL):
        raise RuntimeError(f"{name}: {url} not 200 within 10s: {tls_fetch(url, context, login)}")
    ok(f"{name} ready over TLS on 127.0.0.1:{exporter.port} ({Path(web).name})")
    return exporter


def check_tls(binary, fake, work, logs):
    certs = work / "certs"
    subprocess.run([REPO_ROOT / "Tests" / "Support" / "make-test-certificates", certs], check=True)
    password = "e2e ☂ scrape"
    hashed = subprocess.run(["htpasswd", "-niBC", "6", "prometheus"], input=password.encode(), check=True,
                            capture_output=True).stdout.decode().strip().split(":", 1)[1]
    (certs / "password").write_text(password)
    tls = f"tls_server_config:\n  cert_file: {certs}/server.pem\n  key_file: {certs}/server.key\n"
    login_web = work / "web-login.yml"
    login_web.write_text(tls + f'basic_auth_users:\n  prometheus: "{hashed}"\n')
    mtls_web = work / "web-mtls.yml"
    mtls_web.write_text(tls + f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {certs}/ca.pem\n"
                        "  client_allowed_sans: [scraper.example]\n")
    config = write_exporter_config(work / "cloudy-tls.yml", fake.url, MAIN_PLACES[:2],
                                   refresh={"interval": "1s", "timeout": "2s"})
    server_only = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with_client = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with_client.load_cert_chain(str(certs / "client.pem"), str(certs / "client.key"))
    basic = start_tls_exporter(binary, config, work, "tls-basic-auth", logs, login_web, server_only,
                               f"prometheus:{password}")
    mutual = start_tls_exporter(binary, config, work, "tls-client-cert", logs, mtls_web, with_client)

    prometheus_config = work / "prometheus-tls.yml"
    job = """  - job_name: {name}
    scheme: https
    tls_config:
      ca_file: {certs}/ca.pem
      server_name: localhost{extra}
    static_configs:
      - targets: ['127.0.0.1:{port}']
"""
    prometheus_config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + "".join([
        job.format(name="cloudy-basic-auth", certs=certs, port=basic.port,
                   extra=f"\n    basic_auth:\n      username: prometheus\n      password_file: {certs}/password"),
        job.format(name="cloudy-client-cert", certs=certs, port=mutual.port,
                   extra=f"\n      cert_file: {certs}/client.pem\n      key_file: {certs}/client.key"),
        job.format(name="cloudy-no-login", certs=certs, port=basic.port, extra=""),
        job.format(name="cloudy-other-ca", certs=certs, port=mutual.port,
                   extra=f"\n      cert_file: {certs}/other-client.pem\n      key_file: {certs}/other-client.key"),
    ]))
    url = launch_prometheus(work, prometheus_config, "-tls", logs, "second Prometheus (TLS jobs)")
    for name in ["cloudy-basic-auth", "cloudy-client-cert"]:
        if wait_target(url, name, 15):
            wait_query(url, f'count(weather_up{{job="{name}"}} == 1) == 2', 10, f"job {name}: both places up")

    def refused(name, reason):
        def down():
            targets = prom(url, "/api/v1/targets", state="active")["activeTargets"]
            mine = [t for t in targets if t["labels"].get("job") == name]
            return mine if mine and all(t["health"] == "down" and reason in t["lastError"] for t in mine) else None
        targets = poll(down, 10, POLL)
        if targets:
            ok(f"job {name} is down as it must be: {targets[0]['lastError']}")
        else:
            fail(f"job {name}: not down with {reason!r} within 10s")

    refused("cloudy-no-login", "401")
    refused("cloudy-other-ca", "tls")
    for exporter in (basic, mutual):
        text = exporter.log_path.read_text(errors="replace")
        if not exporter.alive():
            fail(f"{exporter.log_path.stem} exited")
        elif password in text or hashed in text or hashed[7:] in text:
            fail(f"{exporter.log_path.name} holds the password or its hash")
        else:
            ok(f"{exporter.log_path.stem} alive; its log holds no password and no hash")


def phase(name, function, *args):
    """Runs one check; an error it did not expect is its FAIL line, and the run goes on."""
    try:
        function(*args)
    except (PromError, RuntimeError, OSError, ValueError, KeyError, TimeoutError, subprocess.CalledProcessError) as error:
        fail(f"{name}: {type(error).__name__}: {error}")


# Each place in its own units, so that every unit family is some place's only one (and Berlin's
# knots and London's °F must stay out of panels that show m/s and °C for them).
PLACE_UNITS = {
    "Berlin": {"temperature": ["celsius"], "wind_speed": ["meters_per_second", "knots"]},
    "London": {"temperature": ["celsius", "fahrenheit"], "wind_speed": ["knots"]},
    "New York": {"temperature": ["fahrenheit"], "wind_speed": ["miles_per_hour"]},
    "Oslo": {"temperature": ["fahrenheit"], "wind_speed": ["kilometers_per_hour"]},
    "St. John's": {"temperature": ["celsius"], "wind_speed": ["kilometers_per_hour"]},
}


def write_units_config(path, provider_url):
    """The main run's cloudy.yml: MAIN_PLACES with the units of PLACE_UNITS, refreshing every second."""
    document = {
        # A stated quota (the fake has none of its own) so the quota panel has data; large
        # enough that the 1s interval fits it and is not stretched.
        "provider": {"name": "open-meteo", "url": provider_url,
                     "quota": {"per_day": 10_000_000, "per_month": 300_000_000}},
        "refresh": {"interval": "1s", "timeout": "2s"},
        "forecast": {"days": 7, "hours": 24},
        "warnings": warning_settings(provider_url),
        # Air quality and pollen from the same fake, so their panels and alert get data.
        "air_quality": {"url": provider_url},
        "locations": [{"name": name, "latitude": lat, "longitude": lon, "units": PLACE_UNITS[name],
                       **({"alerts": PLACE_ALERTS[name]} if name in PLACE_ALERTS else {})}
                      for name, lat, lon in MAIN_PLACES],
    }
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return ExporterConfig(path, MAIN_PLACES, PLACE_UNITS)


def run(work, logs):
    started = time.monotonic()
    binary, build_seconds = prepare(work)
    fake = start_fake(work, logs)
    config = write_units_config(work / "cloudy.yml", fake.url)
    arm_warnings(fake)
    exporter = start_exporter(binary, config, work, "exporter", logs)
    prometheus = start_prometheus(work, exporter, logs)
    phase("warnings", official_warnings, prometheus, FIRING_BUDGET)
    phase("panels", check_panels, prometheus, fake, config, exporter)
    phase("frost", frost, prometheus, fake, config.places, FIRING_BUDGET)
    phase("thresholds", thresholds, prometheus, fake, config.places, FIRING_BUDGET)
    phase("air quality", air_quality_alert, prometheus, FIRING_BUDGET)
    # Every shipped rule, templates included, has been evaluated for many seconds by now.
    phase("rules", rules, prometheus, REPO_ROOT / "deploy" / "prometheus" / "rules")
    phase("shards", check_shards, binary, fake, work, logs)
    phase("tls", check_tls, binary, fake, work, logs)
    # The exporter lived through the faults and every query.
    if exporter.alive():
        ok("exporter still running after all phases")
    else:
        fail("exporter exited during the run")
    seconds = time.monotonic() - started - build_seconds
    if seconds >= TIME_BUDGET:
        fail(f"run took {seconds:.0f}s (without building), budget {TIME_BUDGET}s")


def main():
    started = time.monotonic()
    keep = os.environ.get("KEEP_TMP") == "1"
    work = scratch_dir("e2e", keep=keep)
    logs = []
    try:
        run(work, logs)
    except Fatal as error:
        if str(error):
            fail(str(error))
    except (KeyboardInterrupt, SystemExit):
        fail("interrupted")
    except Exception as error:  # noqa: BLE001 - a crash must not end the run looking green
        fail(f"stopped by an unexpected error: {type(error).__name__}: {error}")
    if failures:
        for log in logs:  # before stopping, so that the tails show the failure, not the shutdown
            if log.exists() and log.stat().st_size:
                print(f"---- tail of {log.name}")
                for line in log.read_text(errors="replace").splitlines()[-25:]:
                    print(f"  {line}")
    stop_all()
    if keep:
        print(f"kept {work}")
    print(f"duration: {time.monotonic() - started:.0f}s")
    print(f"e2e-prometheus: {passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
