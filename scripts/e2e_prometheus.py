#!/usr/bin/env python3
"""Checks for scripts/e2e-prometheus that are easier in Python than in bash.

scripts/e2e-prometheus starts the processes (fake Open-Meteo, cloudy_exporter, Prometheus) and
calls one subcommand per phase. Every check prints one line starting with `ok   ` or `FAIL `,
which the bash script counts; the exit status is 1 when any line of this call was a FAIL, so
the caller can stop when a prerequisite is missing.

    wait-target --prometheus URL --job JOB --timeout S
        until Prometheus reports every target of JOB healthy ("up")
    wait-query  --prometheus URL --expr PROMQL --timeout S --what TEXT
        until an instant query returns at least one sample
    rules       --prometheus URL --dir DIR
        the rule groups of every rules file in DIR are loaded and evaluate without error
    panels      --prometheus URL --dashboard FILE --config CLOUDY_YML [--range-seconds 60]
        every panel query of the Grafana dashboard, variables substituted, returns data
    frost       --prometheus URL --fake URL --config CLOUDY_YML [--firing-budget 15]
        tomorrow's minimum of one place set to -5 °C: the frost alert is firing for that place,
        and only for it, within the budget; set back to 5 °C, it stays firing (keep_firing_for)
    shards      --config CLOUDY_YML URL...
        each place's weather_location_info is on exactly one shard's /metrics page

Python 3.11 standard library, plus PyYAML (scripts/install-deps --test) to read cloudy.yml.
"""

import argparse
import itertools
import json
import math
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import yaml

HTTP_TIMEOUT = 5  # seconds; every request is local, so anything slower is a failure
POLL = 0.25  # seconds between polls

failures = 0


def ok(text):
    print(f"ok   {text}", flush=True)


def fail(text):
    global failures
    failures += 1
    print(f"FAIL {text}", flush=True)


# --- HTTP ---------------------------------------------------------------------------------


def http(url, body=None):
    """GET (or POST a JSON body); returns the decoded text. Raises on non-2xx with the body."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            return response.read().decode()
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{url.split('?')[0]}: HTTP {error.code}: {error.read().decode()[:300]}") from None


class PromError(Exception):
    pass


def prom(base, path, **params):
    """`data` of a Prometheus API answer; PromError unless status is success."""
    url = f"{base}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        answer = json.loads(http(url))
    except (RuntimeError, OSError, ValueError) as error:
        raise PromError(str(error)) from None
    if answer.get("status") != "success":
        raise PromError(f"{answer.get('errorType')}: {answer.get('error')}")
    return answer["data"]


def instant(base, expr):
    return prom(base, "/api/v1/query", query=expr)["result"]


def poll(timeout, attempt):
    """Calls attempt() until it returns something truthy or timeout seconds pass; last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = attempt()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(POLL)


def places_of(config_path):
    """[(name, latitude, longitude)] of a cloudy.yml, in config order."""
    config = yaml.safe_load(Path(config_path).read_text())
    return [(p["name"], float(p["latitude"]), float(p["longitude"])) for p in config["locations"]]


def units_of(config_path, key):
    value = yaml.safe_load(Path(config_path).read_text())["units"][key]
    return value if isinstance(value, list) else [value]


# --- wait-target, wait-query, rules -----------------------------------------------------------


def wait_target(args):
    def healthy():
        try:
            targets = prom(args.prometheus, "/api/v1/targets", state="active")["activeTargets"]
        except PromError:
            return None
        mine = [t for t in targets if t["labels"].get("job") == args.job]
        return mine if mine and all(t["health"] == "up" for t in mine) else None

    started = time.monotonic()
    targets = poll(args.timeout, healthy)
    if targets:
        urls = ", ".join(t["scrapeUrl"] for t in targets)
        ok(f"Prometheus scrapes job {args.job} ({urls}): up after {time.monotonic() - started:.1f}s")
    else:
        fail(f"Prometheus target of job {args.job} not up within {args.timeout}s")


def wait_query(args):
    def answer():
        try:
            return instant(args.prometheus, args.expr)
        except PromError:
            return None

    started = time.monotonic()
    result = poll(args.timeout, answer)
    if result:
        ok(f"{args.what}: after {time.monotonic() - started:.1f}s ({args.expr})")
    else:
        fail(f"{args.what}: no data within {args.timeout}s ({args.expr})")


def rules(args):
    """Each shipped rules file's groups are loaded, and no rule has an evaluation error."""
    wanted = {}
    for path in sorted(Path(args.dir).glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            wanted[group["name"]] = len(group["rules"])
    groups = {g["name"]: g for g in prom(args.prometheus, "/api/v1/rules")["groups"]}
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
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
REGEX_MATCHER_BEFORE = re.compile(r'[=!]~\s*"[^"]*$')
REGEX_SPECIAL = re.compile(r"([\\.+*?()|\[\]{}^$])")


def promql_string(value):
    """A value inside a double-quoted PromQL string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def substitute(expr, values):
    """expr with dashboard and built-in variables filled in; KeyError names an unknown one.

    Inside a regex matcher (`=~"$place"`, `!~"$place"`) the value is regex-escaped so that it
    matches itself only; elsewhere it is escaped for a PromQL string. Names of metrics
    (`weather_temperature_${temperature_unit}`) take the value as is.
    """
    out, last = [], 0
    for match in VARIABLE.finditer(expr):
        name = match.group(1) or match.group(2) or match.group(3)
        if name in BUILTINS:
            value = BUILTINS[name]
        else:
            value = values[name]  # KeyError: a variable this script does not know
            before = expr[: match.start()]
            if REGEX_MATCHER_BEFORE.search(before):
                value = promql_string(REGEX_SPECIAL.sub(r"\\\1", value))
            elif before.count('"') % 2 == 1:  # inside a "..." string
                value = promql_string(value)
        out.append(expr[last : match.start()])
        out.append(value)
        last = match.end()
    out.append(expr[last:])
    return "".join(out)


def dashboard_variables(expr):
    return {m.group(1) or m.group(2) or m.group(3) for m in VARIABLE.finditer(expr)} - set(BUILTINS)


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
        raise PromError(f"{ref}: no data")
    if all(math.isnan(float(v)) for v in values):
        raise PromError(f"{ref}: only NaN")
    return shape


def panels(args):
    dashboard = json.loads(Path(args.dashboard).read_text())
    choices = {
        "place": [name for name, _, _ in places_of(args.config)],
        "temperature_unit": units_of(args.config, "temperature"),
        "wind_unit": units_of(args.config, "wind_speed"),
    }

    # The `place` variable itself: label_values(weather_location_info, location).
    found = prom(args.prometheus, "/api/v1/label/location/values", **{"match[]": "weather_location_info"})
    if sorted(found) == sorted(choices["place"]):
        ok(f"variable place = label_values(weather_location_info, location): {', '.join(sorted(found))}")
    else:
        fail(f"variable place: Prometheus has {sorted(found)}, the config {sorted(choices['place'])}")

    # A regex-style place selector (what a multi-value variable would use) picks the same series.
    for place in choices["place"]:
        expr = substitute('weather_location_info{location=~"$place"}', {"place": place})
        got = [s["metric"]["location"] for s in instant(args.prometheus, expr)]
        (ok if got == [place] else fail)(f'regex-style {expr} selects {got}')

    for panel in walk_panels(dashboard.get("panels", [])):
        targets = [t for t in panel.get("targets", []) if t.get("expr") and not t.get("hide")]
        if not targets:
            continue  # rows, text panels
        label = f'panel {panel.get("id")} "{panel.get("title", "")}"'
        used = sorted(set().union(*(dashboard_variables(t["expr"]) for t in targets)))
        unknown = [name for name in used if name not in choices]
        if unknown:
            fail(f"{label}: uses variables this script cannot fill: {unknown}")
            continue
        for combination in itertools.product(*(choices[name] for name in used)):
            values = dict(zip(used, combination))
            where = " ".join(f"{k}={v}" for k, v in values.items()) or "(no variables)"
            shapes, errors = [], []
            for target in targets:
                expr = substitute(target["expr"], values)
                try:
                    shapes.append(run_target(args.prometheus, target, expr, args.range_seconds))
                except PromError as error:
                    errors.append(f"{error} in {expr}")
            if errors:
                fail(f"{label} {where}: {'; '.join(errors)}")
            else:
                ok(f"{label} {where}: {' '.join(shapes)}")


# --- frost ------------------------------------------------------------------------------------

FROST_ALERT = "CloudyFrostForecast"


def frost(args):
    places = places_of(args.config)
    names = [name for name, _, _ in places]

    # The fake's override addresses a place by its index in the weather request, so look at the
    # exporter's last request to learn which configured place index 1 is.
    requests = json.loads(http(f"{args.fake}/-/requests"))["requests"]
    if not requests:
        fail("frost: the fake has no weather request to learn the place order from")
        return
    query = requests[-1]["query"]
    coordinates = list(zip(map(float, query["latitude"].split(",")), map(float, query["longitude"].split(","))))
    if len(coordinates) < 2:
        fail(f"frost: the last weather request has {len(coordinates)} place(s); need 2 or more")
        return
    lat, lon = coordinates[1]
    matches = [name for name, plat, plon in places if abs(plat - lat) < 1e-6 and abs(plon - lon) < 1e-6]
    if len(matches) != 1:
        fail(f"frost: request place 1 at {lat},{lon} is not one configured place ({matches})")
        return
    place = matches[0]
    others = [name for name in names if name != place]

    # Daily index 1 is tomorrow; values are °C like the real API's default.
    http(f"{args.fake}/-/override", {"place": 1, "daily": {"temperature_2m_min": [10.0, -5.0]}})
    started = time.monotonic()

    def left():
        """Seconds of the firing budget not yet used since the override."""
        return max(0.0, args.firing_budget - (time.monotonic() - started))

    # The next refresh (1s) and the next scrape (1s) bring it to Prometheus.
    def frosty():
        try:
            return instant(args.prometheus, 'weather_forecast_daily_temperature_min_celsius{job="cloudy"} < 0')
        except PromError:
            return None

    below = poll(left(), frosty)
    got = sorted((s["metric"]["location"], s["metric"]["day"], float(s["value"][1])) for s in below or [])
    if got == [(place, "1", -5.0)]:
        fahrenheit = instant(args.prometheus,
                             f'weather_forecast_daily_temperature_min_fahrenheit{{location="{promql_string(place)}",day="1"}}')
        value = float(fahrenheit[0]["value"][1]) if fahrenheit else None
        if value is not None and abs(value - 23.0) < 1e-9:
            ok(f"override: tomorrow's minimum in {place} is -5 °C / 23 °F in Prometheus after "
               f"{time.monotonic() - started:.1f}s; no other place or day below 0 °C")
        else:
            fail(f"override: {place} day 1 in °F is {value}, want 23")
    else:
        fail(f"override: daily minimums below 0 °C in Prometheus are {got}, want [({place!r}, '1', -5.0)] "
             f"within {args.firing_budget:.0f}s")
        return

    # The shipped rule fires on its first evaluation (no `for:`) and holds for keep_firing_for.
    def frost_rule():
        return next((r for g in prom(args.prometheus, "/api/v1/rules")["groups"] for r in g["rules"]
                     if r.get("name") == FROST_ALERT and r.get("type") == "alerting"), None)

    rule = frost_rule()
    if rule is None:
        fail(f"{FROST_ALERT}: no such alerting rule loaded")
        return
    hold, keep = float(rule.get("duration", 0)), float(rule.get("keepFiringFor", 0))
    timing = f"for: {hold:.0f}s, keep_firing_for: {keep:.0f}s"

    def frost_alerts():
        try:
            alerts = prom(args.prometheus, "/api/v1/alerts")["alerts"]
        except PromError:
            return None
        return [a for a in alerts if a["labels"].get("alertname") == FROST_ALERT]

    def firing():
        alerts = frost_alerts() or []
        mine = [a for a in alerts if a["labels"].get("location") == place and a["state"] == "firing"]
        return alerts if mine else None

    alerts = poll(left(), firing) or frost_alerts() or []
    mine = [a for a in alerts if a["labels"].get("location") == place]
    if [a["state"] for a in mine] == ["firing"] and mine[0]["labels"].get("day") == "1":
        alert = mine[0]
        labels, annotations = alert["labels"], alert["annotations"]
        ok(f"{FROST_ALERT} is firing for {place} day=1 (activeAt {alert.get('activeAt')}, value {alert.get('value')}) "
           f"{time.monotonic() - started:.1f}s after the override, within the {args.firing_budget:.0f}s budget ({timing})")
        problems = []
        if labels.get("severity") != "warning" or labels.get("category") != "weather":
            problems.append(f"labels {labels}")
        if annotations.get("summary") != f"Frost forecast in {place} tomorrow":
            problems.append(f"summary {annotations.get('summary')!r}")
        description = annotations.get("description", "")
        if "-5.0 °C" not in description or "frost threshold of 0 °C" not in description:
            problems.append(f"description {description!r}")
        if problems:
            fail(f"{FROST_ALERT} for {place}: unexpected {'; '.join(problems)}")
        else:
            ok(f'{FROST_ALERT} for {place}: severity=warning category=weather, summary "{annotations["summary"]}", '
               f'description says -5.0 °C and the 0 °C threshold')
    else:
        fail(f"{FROST_ALERT} for {place}: states {[(a['labels'].get('day'), a['state']) for a in mine]} "
             f"{time.monotonic() - started:.1f}s after the override, want one alert, day=1, firing within "
             f"{args.firing_budget:.0f}s (the rule has {timing})")
        alert = None

    # Nothing for the other places, neither in /api/v1/alerts nor in the ALERTS series.
    elsewhere = sorted({a["labels"].get("location") for a in alerts} - {place})
    series = instant(args.prometheus, f'ALERTS{{alertname="{FROST_ALERT}"}}')
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
    http(f"{args.fake}/-/override", {"place": 1, "daily": {"temperature_2m_min": [10.0, 5.0]}})
    recovered_at = time.monotonic()
    tomorrow = f'weather_forecast_daily_temperature_min_celsius{{job="cloudy",location="{promql_string(place)}",day="1"}}'

    def mild():
        try:
            return instant(args.prometheus, f"{tomorrow} >= 0")
        except PromError:
            return None

    back = poll(15, mild)
    if not back:
        fail(f"recovery: tomorrow's minimum in {place} is not back above 0 °C in Prometheus within 15s")
        return
    seen = float(back[0]["value"][0])  # Prometheus' time of that query

    # Wait for a few evaluations that have seen the recovered value (evaluation_interval 1s).
    def evaluated_since():
        last = (frost_rule() or {}).get("lastEvaluation")
        return bool(last) and datetime.fromisoformat(last).timestamp() > seen + 3

    if not poll(10, evaluated_since):
        fail(f"{FROST_ALERT}: not evaluated in the 10s after the forecast went back to 5 °C")
        return
    held = [a for a in frost_alerts() or [] if a["labels"].get("location") == place]
    matching = instant(args.prometheus, f"({tomorrow} < on() group_left() cloudy:threshold_frost_celsius)")
    if ([a["state"] for a in held] == ["firing"] and held[0].get("activeAt") == alert.get("activeAt")
            and not matching):
        ok(f"{FROST_ALERT} still firing for {place} (same activeAt) {time.monotonic() - recovered_at:.1f}s after "
           f"the forecast went back to 5 °C, held by keep_firing_for: {keep:.0f}s")
    else:
        fail(f"{FROST_ALERT} for {place} after the forecast went back to 5 °C: states "
             f"{[(a['state'], a.get('activeAt')) for a in held]}, want firing since {alert.get('activeAt')} "
             f"(rule has {timing}; frost condition still matching: {bool(matching)})")


# --- shards -----------------------------------------------------------------------------------

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"')


def unescape(value):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def locations_on(url):
    """({location of weather_location_info}, {location of any other weather_* series})."""
    info, weather = set(), set()
    for line in http(url).splitlines():
        match = SAMPLE.match(line)
        if not match or not match.group(1).startswith("weather_"):
            continue
        labels = {k: unescape(v) for k, v in LABEL.findall(match.group(2) or "")}
        if "location" in labels:
            (info if match.group(1) == "weather_location_info" else weather).add(labels["location"])
    return info, weather


def shards(args):
    names = [name for name, _, _ in places_of(args.config)]
    owners = {name: [] for name in names}
    for index, url in enumerate(args.urls):
        info, weather = locations_on(url)
        for name in info:
            owners.setdefault(name, []).append(index)
        strays = sorted(weather - info)
        if strays:
            fail(f"shard {index}/{len(args.urls)}: weather series for places it does not own: {strays}")
        else:
            ok(f"shard {index}/{len(args.urls)}: {len(info)} places ({', '.join(sorted(info)) or 'none'}), "
               f"weather series only for those")
    missing = sorted(name for name, where in owners.items() if not where)
    doubled = sorted(f"{name} on {where}" for name, where in owners.items() if len(where) > 1)
    unknown = sorted(name for name in owners if name not in names)
    if missing or doubled or unknown:
        fail(f"shards: missing {missing}, on several shards {doubled}, not configured {unknown}")
    else:
        ok(f"shards: each of the {len(names)} configured places is on exactly one of {len(args.urls)} shards")


# --- main -------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    command = commands.add_parser("wait-target")
    command.add_argument("--prometheus", required=True)
    command.add_argument("--job", required=True)
    command.add_argument("--timeout", type=float, default=15)
    command.set_defaults(run=wait_target)

    command = commands.add_parser("wait-query")
    command.add_argument("--prometheus", required=True)
    command.add_argument("--expr", required=True)
    command.add_argument("--what", required=True)
    command.add_argument("--timeout", type=float, default=15)
    command.set_defaults(run=wait_query)

    command = commands.add_parser("rules")
    command.add_argument("--prometheus", required=True)
    command.add_argument("--dir", required=True)
    command.set_defaults(run=rules)

    command = commands.add_parser("panels")
    command.add_argument("--prometheus", required=True)
    command.add_argument("--dashboard", required=True)
    command.add_argument("--config", required=True)
    command.add_argument("--range-seconds", type=float, default=60)
    command.set_defaults(run=panels)

    command = commands.add_parser("frost")
    command.add_argument("--prometheus", required=True)
    command.add_argument("--fake", required=True)
    command.add_argument("--config", required=True)
    command.add_argument("--firing-budget", type=float, default=15,
                         help="seconds from the override within which the alert must be firing")
    command.set_defaults(run=frost)

    command = commands.add_parser("shards")
    command.add_argument("--config", required=True)
    command.add_argument("urls", nargs="+", help="/metrics URL of each shard, in shard order")
    command.set_defaults(run=shards)

    args = parser.parse_args()
    try:
        args.run(args)
    except (PromError, RuntimeError, OSError, ValueError, KeyError) as error:
        fail(f"{args.command}: {type(error).__name__}: {error}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
