"""The fake weather APIs (Tests/Fakes/fake_weather.py) as a child process, and its control API."""

import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from .http_client import fetch, post_json
from .paths import FAKE_WEATHER
from .processes import spawn, stop


class FakeWeather:
    """`python3 Tests/Fakes/fake_weather.py --port 0 --quiet` on 127.0.0.1, started at once.

    Its request log (stderr) goes to `log_path`; its first stdout line, "listening HOST:PORT",
    gives `url`. `cpu` pins it to one core (taskset).
    """

    def __init__(self, work: Path, latency_ms: float = 0, cpu: int | None = None, start_timeout: float = 15):
        args = [sys.executable, FAKE_WEATHER, "--host", "127.0.0.1", "--port", "0", "--quiet",
                "--latency-ms", f"{latency_ms:g}"]
        if cpu is not None:
            args = ["taskset", "-c", cpu] + args
        self.args = args
        self.log_path = work / "fake.stderr"
        with open(self.log_path, "w") as log:
            self.proc = spawn(args, stdout=subprocess.PIPE, stderr=log, text=True)
        line = _first_line(self.proc.stdout, start_timeout)
        match = re.fullmatch(r"listening 127\.0\.0\.1:(\d+)", line)
        if not match:
            stop(self.proc)
            raise RuntimeError(f"the fake weather API did not start: it said {line!r}; "
                               f"{self.log_path.read_text()[-2000:]}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain

    def control(self, name: str, body: dict | None = None) -> dict:
        """POST /-/NAME with a JSON body; the fake's JSON answer. RuntimeError unless 200."""
        answer = post_json(f"{self.url}/-/{name}", body or {})
        if answer.status != 200:
            raise RuntimeError(f"fake /-/{name}: HTTP {answer.status}: {answer.text[:300]}")
        return answer.json()

    def reset(self) -> dict:
        return self.control("reset")

    def latency(self, ms: float) -> dict:
        return self.control("latency", {"ms": ms})

    def fault(self, mode: str, **options) -> dict:
        return self.control("fault", {"mode": mode, **options})

    def warnings(self, source: str, alerts: list | None) -> dict:
        """Has the fake warning service `source` ("nws", "met-norway", "dwd") list `alerts`
        (None: its fixture's); see Tests/Fakes/weather_apis/warning_alerts.py."""
        return self.control("warnings", {"source": source, "alerts": alerts})

    def override(self, **body) -> dict:
        return self.control("override", body)

    def requests(self) -> dict:
        """GET /-/requests: {"count", "in_flight", "max_in_flight", "requests": [...]}."""
        answer = fetch(self.url + "/-/requests", timeout=5)
        if answer.status != 200:
            raise RuntimeError(f"fake /-/requests: HTTP {answer.status}")
        return answer.json()

    def stop(self) -> None:
        stop(self.proc)


def _first_line(stream, timeout: float) -> str:
    """The first line of `stream` (stripped), or TimeoutError after `timeout` seconds."""
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not result:
        raise TimeoutError(f"the fake weather API printed no 'listening' line within {timeout:g}s")
    return result[0].strip()


def dwd_alert(alert_id: str, severity: str, expires: float, event: str = "storm",
              headline: str = "Official WARNING of STORM", description: str = "Storm gusts up to 85 km/h.",
              instruction: str | None = None) -> dict:
    """One DWD warning shaped as Bright Sky lists it (for `FakeWeather.warnings("dwd", …)`), in
    force from a minute ago until `expires` (unix seconds)."""
    def iso(unix):
        return datetime.fromtimestamp(unix, timezone.utc).isoformat(timespec="seconds")
    return {"id": 1, "alert_id": alert_id, "effective": iso(time.time() - 60), "onset": iso(time.time() - 60),
            "expires": iso(expires), "category": "met", "response_type": "prepare", "urgency": "immediate",
            "severity": severity, "certainty": "likely", "event_code": 59, "event_en": event,
            "event_de": event.upper(), "headline_en": headline, "headline_de": headline,
            "description_en": description, "description_de": description, "instruction_en": instruction,
            "instruction_de": None, "status": "actual"}
