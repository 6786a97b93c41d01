"""cloudy_exporter as a child process: started with a config, watched through its JSON log."""

import json
import subprocess
import threading
import time
from pathlib import Path

from . import exposition, procfs
from .http_client import fetch, wait_ok
from .ports import free_port
from .processes import spawn, stop

# The `provider` of the warning services' feeds: their "refresh finished" lines are asks for
# warnings, not weather refreshes, and go to `warning_refreshes`.
WARNING_SOURCES = {"nws", "met-norway-metalerts", "dwd"}


class Exporter:
    """cloudy_exporter on 127.0.0.1:PORT with JSON logs, started at once.

    The log is read as it comes (and copied to `log_path`), so the end of every refresh
    ("refresh finished", logged after the pages are rendered) is seen without scraping.
    `cpu` pins it to one core (taskset); `wrapper` runs it inside another command in the same
    process (valgrind); `name` names its log and storage directory in `work`.
    """

    def __init__(self, binary: Path, config: Path, work: Path, cpu: int | None = None, port: int | None = None,
                 wrapper: list | None = None, extra_args: list | None = None, name: str | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        storage = work / (f"{name}-data" if name else "data")
        args = [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{self.port}",
                f"--storage.path={storage}", "--log.format=json", *(extra_args or [])]
        if wrapper:
            args = wrapper + args
        if cpu is not None:
            args = ["taskset", "-c", cpu] + args
        self.args = args
        self.log_lines: list[str] = []
        self.refreshes: list[dict] = []  # {"at": monotonic seconds, "duration": s, "ok": n, "failed": n}
        self.warning_refreshes: list[dict] = []  # the same, with "provider", for the warning services
        self._changed = threading.Condition()
        self.log_path = work / f"{name or f'exporter-{self.port}'}.log"
        self._log = open(self.log_path, "w")
        self.started = time.monotonic()
        self.started_wall = time.time()  # the log's `ts` is wall-clock time
        self.proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid  # taskset execs the exporter: same pid
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self):
        for line in self.proc.stderr:
            now = time.monotonic()
            self._log.write(line)
            self._log.flush()
            try:
                event = json.loads(line)
            except ValueError:
                event = {}
            with self._changed:
                self.log_lines.append(line.rstrip("\n"))
                if event.get("msg") == "refresh finished":
                    refresh = {
                        "at": now, "duration": float(event.get("duration_seconds", "nan")),
                        "ok": int(event.get("places_ok", 0)), "failed": int(event.get("places_failed", 0)),
                    }
                    if event.get("provider") in WARNING_SOURCES:
                        self.warning_refreshes.append({**refresh, "provider": event["provider"]})
                    else:
                        self.refreshes.append(refresh)
                self._changed.notify_all()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _exited(self) -> RuntimeError:
        return RuntimeError(f"the exporter exited with status {self.proc.returncode}; log tail: {self.log_lines[-3:]}")

    def wait_refreshes(self, count: int, timeout: float) -> list[dict]:
        """Waits until `count` refreshes have finished (rendered) in total."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.refreshes) < count:
                left = deadline - time.monotonic()
                if not self.alive():
                    raise self._exited()
                if left <= 0:
                    raise RuntimeError(f"{len(self.refreshes)} of {count} refreshes after {timeout:g}s; "
                                       f"log tail: {self.log_lines[-3:]}")
                self._changed.wait(min(left, 0.5))
            return list(self.refreshes)

    def wait_ready(self, timeout: float = 60) -> None:
        """Until /readyz answers 200; RuntimeError at once if the exporter exits, TimeoutError."""
        try:
            wait_ok(self.url + "/readyz", timeout, self.proc)
        except RuntimeError:
            raise self._exited() from None

    def metrics(self, headers: dict | None = None) -> tuple[bytes, dict]:
        status, response_headers, body = fetch(self.url + "/metrics", headers=headers)
        if status != 200:
            raise RuntimeError(f"GET {self.url}/metrics: HTTP {status}")
        return body, response_headers

    def samples(self) -> dict[str, float]:
        return exposition.values(self.metrics()[0].decode())

    def cpu_seconds(self) -> float:
        return procfs.cpu_seconds(self.pid)

    def rss(self) -> int:
        return procfs.status_bytes(self.pid, "VmRSS")

    def stop(self, grace: float = 5.0) -> None:
        stop(self.proc, grace)
