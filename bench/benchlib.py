"""Shared helpers for Cloudy's benchmark scripts (Python 3.11 standard library only).

Every process started here (the fake weather API, cloudy_exporter, nginx, wrk) is started in
its own session and registered; on exit, on an exception and on SIGINT/SIGTERM/SIGHUP each one
gets SIGTERM, then SIGKILL if it is still there after a few seconds. Everything listens on
127.0.0.1. Every wait is bounded by a deadline.
"""

import atexit
import gzip as gziplib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
FAKE = ROOT / "Tests" / "Fakes" / "fake_weather.py"
WRK_REPORT = BENCH / "wrk_report.lua"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

# --------------------------------------------------------------------------------------------
# Processes and clean-up

_children: list[subprocess.Popen] = []


def spawn(args, **kwargs) -> subprocess.Popen:
    """Starts a registered child in its own session (so its whole group can be stopped)."""
    proc = subprocess.Popen([str(a) for a in args], start_new_session=True, **kwargs)
    _children.append(proc)
    return proc


def stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM to the child's own process group, SIGKILL after `grace` seconds."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def cleanup() -> None:
    while _children:
        stop(_children.pop())


def _on_signal(signum, _frame):
    raise SystemExit(128 + signum)


atexit.register(cleanup)
for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _on_signal)


def workdir(prefix: str) -> Path:
    """A temporary directory removed at exit (world-readable: nginx workers may run as nobody)."""
    path = Path(tempfile.mkdtemp(prefix=f"cloudy-bench-{prefix}-"))
    path.chmod(0o755)
    atexit.register(shutil.rmtree, path, True)
    return path


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


def command_line(args) -> str:
    """The command as a shell line, with the repository root shortened to `.`."""
    text = " ".join(shlex.quote(str(a)) for a in args)
    return text.replace(str(ROOT) + "/", "")


# --------------------------------------------------------------------------------------------
# Small HTTP client (keep it simple: one request per connection)

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None,
         timeout: float = 30.0) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def wait_until(predicate, timeout: float, interval: float = 0.01, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


# --------------------------------------------------------------------------------------------
# Prometheus text parsing (enough for the exporter's own families)

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_metrics(text: str) -> dict[str, float]:
    """{'name{labels}': value} for every sample line; labels kept verbatim."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match:
            samples[match.group(1) + (match.group(2) or "")] = float(match.group(3))
    return samples


def sum_family(samples: dict[str, float], name: str) -> float:
    return sum(v for k, v in samples.items() if k == name or k.startswith(name + "{"))


# --------------------------------------------------------------------------------------------
# /proc readings

def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of one process (all its threads), in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of stat(5)


def proc_status(pid: int, key: str) -> int:
    """A `kB` field of /proc/PID/status (VmRSS, VmHWM, …) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def cpu_times() -> dict[str, float]:
    """Machine-wide CPU seconds since boot from /proc/stat, all cores: `task` (user, nice,
    system: what processes are charged with), `irq` (irq + softirq, where loopback networking
    is largely charged) and `steal` (time the hypervisor gave to someone else)."""
    f = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]] + [0] * 8
    return {"task": (f[0] + f[1] + f[2]) / CLK_TCK, "irq": (f[5] + f[6]) / CLK_TCK, "steal": f[7] / CLK_TCK}


def wait_idle(limit: float, threshold: float = 0.15, window: float = 5.0) -> dict:
    """Waits (at most `limit` seconds) for a `window` in which processes use less than
    `threshold` of a core (call it while nothing of ours runs); returns what the last window saw."""
    deadline = time.monotonic() + limit
    while True:
        before = cpu_times()
        time.sleep(window)
        after = cpu_times()
        busy = (after["task"] - before["task"]) / window
        if busy < threshold or time.monotonic() > deadline:
            return {"busy_cores": round(busy, 3), "waited_out": busy >= threshold}
        log(f"bench: the machine is busy ({busy:.2f} cores used by other processes); waiting")


def children_cpu_seconds() -> float:
    """CPU seconds of this script's waited-for children (wrk) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def proc_children(pid: int) -> list[int]:
    pids = []
    task_dir = Path(f"/proc/{pid}/task")
    for task in task_dir.iterdir() if task_dir.exists() else []:
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return pids


def machine() -> dict:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    os_name = "unknown"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "kernel": os.uname().release,
            "memory_gib": round(mem_kb / 1024 / 1024, 1), "os": os_name}


# --------------------------------------------------------------------------------------------
# Workloads

def places(count: int) -> list[tuple[str, float, float]]:
    """`count` places on a 40-column grid (unique names and coordinates, -60..65 latitude)."""
    out = []
    for i in range(count):
        row, col = divmod(i, 40)
        lat = round(-60 + (row % 26) * 5 + 0.25 * (row // 26), 4)
        lon = round(-180 + col * 9 + 0.5, 4)
        out.append((f"Place {i:04d}", lat, lon))
    return out


def write_config(path: Path, fake_url: str, count: int, interval: str = "1h", timeout: str = "60s",
                 stale_after: str = "24h", days: int = 7, hours: int = 24) -> Path:
    """A cloudy.yml with `count` places, default unit families (celsius, meters_per_second)."""
    lines = [
        f"# Generated by bench/benchlib.py: {count} places, {days} daily + {hours} hourly steps.",
        "provider:",
        "  name: open-meteo",
        f"  url: {fake_url}",
        "refresh:",
        f"  interval: {interval}",
        f"  timeout: {timeout}",
        f"  stale_after: {stale_after}",
        "units:",
        "  temperature: celsius",
        "  wind_speed: meters_per_second",
        "  time: 24h",
        "forecast:",
        f"  days: {days}",
        f"  hours: {hours}",
        "locations:",
    ]
    for name, lat, lon in places(count):
        lines += [f'  - name: "{name}"', f"    latitude: {lat}", f"    longitude: {lon}"]
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------------------------
# The fake Open-Meteo

class Fake:
    """Tests/Fakes/fake_weather.py on 127.0.0.1 with --quiet; stderr goes to a file."""

    def __init__(self, work: Path, latency_ms: int = 0, cpu: int | None = None):
        args = [sys.executable, FAKE, "--host", "127.0.0.1", "--port", "0", "--quiet", "--latency-ms", latency_ms]
        if cpu is not None:
            args = ["taskset", "-c", cpu] + args
        self.args = args
        self.stderr = open(work / "fake.stderr", "w")
        self.proc = spawn(args, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        line = _read_line(self.proc.stdout, timeout=15, what="the fake's 'listening' line")
        match = re.match(r"listening ([\d.]+):(\d+)", line)
        if not match:
            raise RuntimeError(f"fake said {line!r}")
        self.url = f"http://127.0.0.1:{match.group(2)}"
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain

    def requests(self) -> dict:
        status, _, body = http(self.url + "/-/requests")
        assert status == 200, status
        return json.loads(body)

    def reset(self) -> None:
        http(self.url + "/-/reset", method="POST", body=b"{}")

    def latency(self, ms: int) -> None:
        http(self.url + "/-/latency", method="POST", body=json.dumps({"ms": ms}).encode())


def _read_line(stream, timeout: float, what: str) -> str:
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not result or not result[0]:
        raise TimeoutError(f"no {what} within {timeout:g}s")
    return result[0].strip()


# --------------------------------------------------------------------------------------------
# cloudy_exporter

def require_tools(script: str, *tools: str) -> None:
    """Exits with a clear message when a command the script runs is not installed."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        sys.exit(f"{script}: {', '.join(missing)} not found; scripts/install-deps --test installs them")


def exporter_binary(default: str) -> Path:
    """$CLOUDY_EXPORTER, else `default` (relative to the repository root)."""
    path = Path(os.environ.get("CLOUDY_EXPORTER") or default)
    if not path.is_absolute():
        path = ROOT / path
    if not os.access(path, os.X_OK):
        sys.exit(f"bench: {path} is not an executable; build it (scripts/build-release) or set CLOUDY_EXPORTER")
    return path


class Exporter:
    """cloudy_exporter on 127.0.0.1:PORT with JSON logs; the log is read as it comes, so the
    end of every refresh ("refresh finished", logged after the pages are rendered) is seen
    without scraping."""

    def __init__(self, binary: Path, config: Path, work: Path, cpu: int | None = None, port: int | None = None,
                 wrapper: list[str] | None = None):
        """`wrapper`: a command that runs the exporter in the same process (e.g. valgrind)."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{self.port}",
                f"--storage.path={work / 'data'}", "--log.format=json"]
        if wrapper:
            args = wrapper + args
        if cpu is not None:
            args = ["taskset", "-c", cpu] + args
        self.args = args
        self.log_lines: list[str] = []
        self.refreshes: list[dict] = []  # {"at": monotonic seconds, "duration": s, "ok": n, "failed": n}
        self._changed = threading.Condition()
        self._logfile = open(work / f"exporter-{self.port}.log", "w")
        self.started = time.monotonic()
        self.proc = spawn(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid  # taskset execs the exporter: same pid
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self):
        for line in self.proc.stderr:
            now = time.monotonic()
            self._logfile.write(line)
            self._logfile.flush()
            try:
                event = json.loads(line)
            except ValueError:
                event = {}
            with self._changed:
                self.log_lines.append(line.rstrip("\n"))
                if event.get("msg") == "refresh finished":
                    self.refreshes.append({
                        "at": now, "duration": float(event.get("duration_seconds", "nan")),
                        "ok": int(event.get("places_ok", 0)), "failed": int(event.get("places_failed", 0)),
                    })
                self._changed.notify_all()

    def wait_refreshes(self, count: int, timeout: float) -> list[dict]:
        """Waits until `count` refreshes have finished (rendered) in total."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.refreshes) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    state = (f"the exporter exited with status {self.proc.returncode}" if self.proc.poll() is not None
                             else f"timed out after {timeout:g}s")
                    raise RuntimeError(f"{len(self.refreshes)} of {count} refreshes: {state}; "
                                       f"log tail: {self.log_lines[-3:]}")
                self._changed.wait(min(left, 0.5))
            return list(self.refreshes)

    def wait_ready(self, timeout: float = 60) -> None:
        wait_until(lambda: self._status("/readyz") == 200, timeout, what=f"{self.url}/readyz")

    def _status(self, path: str) -> int | None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"exporter exited with {self.proc.returncode}: {self.log_lines[-3:]}")
        try:
            return http(self.url + path, timeout=5)[0]
        except OSError:
            return None

    def metrics(self, headers: dict | None = None) -> tuple[bytes, dict]:
        status, response_headers, body = http(self.url + "/metrics", headers=headers)
        assert status == 200, status
        return body, response_headers

    def samples(self) -> dict[str, float]:
        return parse_metrics(self.metrics()[0].decode())

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid)

    def rss(self) -> int:
        return proc_status(self.pid, "VmRSS")

    def stop(self, grace: float = 5.0) -> None:
        stop(self.proc, grace)


# --------------------------------------------------------------------------------------------
# Results

def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def write_json(path: str | None, result: dict) -> None:
    text = json.dumps(result, indent=2, sort_keys=False)
    if path:
        Path(path).write_text(text + "\n")
    print(text)


def gzip_bytes(data: bytes) -> bytes:
    return gziplib.compress(data, compresslevel=6, mtime=0)
