"""Cloudy's test harness: what bench/, scripts/soak, scripts/e2e-prometheus and the deployment
checks share to run the exporter against the fake weather APIs (Python 3.11 standard library).

    FakeWeather(work)                    Tests/Fakes/fake_weather.py on a free port, and its /-/ control API
    dwd_alert(id, severity, expires)     a DWD warning as Bright Sky lists it, for FakeWeather.warnings
    Exporter(binary, config, work)       cloudy_exporter on a free port; wait_ready, wait_refreshes, metrics
    write_exporter_config(path, url, places, refresh=…, units=…, forecast=…)
    spawn / stop / scratch_dir           children and temporary directories cleaned up at exit
    free_port, poll, wait_until, fetch, wait_ok   ports, deadlines, HTTP
    exposition                           the Prometheus text format; golden_metric_names()
    exporter_binary(*defaults)           $CLOUDY_EXPORTER or the first built binary

Scripts import it by a path relative to their own file, e.g. from bench/:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "Support"))
    import cloudy_harness

and shell scripts run `python3 Tests/Support/cloudy_harness exporter-binary ...` (see __main__.py).
"""

from . import exposition, procfs
from .configs import exporter_config, grid_places, write_exporter_config
from .exporter import Exporter
from .fake_weather import FakeWeather, dwd_alert
from .http_client import Response, fetch, post_json, status_of, wait_ok
from .paths import (DEBUG_EXPORTER, FAKE_WEATHER, GOLDEN_PAGES, RELEASE_EXPORTER, REPO_ROOT, exporter_binary,
                    in_repo, shown)
from .ports import free_port
from .processes import scratch_dir, spawn, stop, stop_all
from .waiting import poll, wait_until

__all__ = [
    "DEBUG_EXPORTER", "FAKE_WEATHER", "GOLDEN_PAGES", "RELEASE_EXPORTER", "REPO_ROOT", "Exporter", "FakeWeather",
    "Response", "dwd_alert", "exporter_binary", "exporter_config", "exposition", "fetch", "free_port", "grid_places", "in_repo",
    "poll",
    "post_json", "procfs", "scratch_dir", "shown", "spawn", "status_of", "stop", "stop_all", "wait_ok",
    "wait_until", "write_exporter_config",
]
