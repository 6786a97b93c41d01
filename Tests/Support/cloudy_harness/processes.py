"""Child processes that never outlive the script that started them, and scratch directories.

Every process started with `spawn` runs in a session of its own and is registered; at exit, on an
exception and on SIGINT/SIGTERM/SIGHUP each one still running gets SIGTERM to its whole process
group, then SIGKILL if it is still there after a grace period. Scratch directories are removed
after that, once nothing writes to them any more.
"""

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

_children: list[subprocess.Popen] = []
_scratch: list[Path] = []
_installed = False


def _on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def _at_exit() -> None:
    stop_all()
    while _scratch:
        shutil.rmtree(_scratch.pop(), ignore_errors=True)


def _install() -> None:
    """Cleans up at exit and turns the usual stop signals into an orderly exit (once)."""
    global _installed
    if not _installed:
        _installed = True
        atexit.register(_at_exit)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _on_signal)


def spawn(args, **kwargs) -> subprocess.Popen:
    """Starts a registered child in its own session (so that its whole group can be stopped)."""
    _install()
    _children[:] = [child for child in _children if child.returncode is None]  # forget the reaped
    proc = subprocess.Popen([str(a) for a in args], start_new_session=True, **kwargs)
    _children.append(proc)
    return proc


def stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM to the child's process group, SIGKILL after `grace` seconds; waits for the exit."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.poll()


def stop_all() -> None:
    """Stops every registered child still running, the latest first."""
    while _children:
        stop(_children.pop())


def scratch_dir(prefix: str, keep: bool = False) -> Path:
    """A new temporary directory, removed at exit (after the children have stopped) unless
    `keep`. World-readable: nginx workers may run as nobody."""
    _install()
    path = Path(tempfile.mkdtemp(prefix=f"cloudy-{prefix}-"))
    path.chmod(0o755)
    if not keep:
        _scratch.append(path)
    return path
