"""Where things are in the repository, found from this file (no install step, no environment)."""

import os
import shlex
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]  # Tests/Support/cloudy_harness/paths.py
FAKE_WEATHER = REPO_ROOT / "Tests" / "Fakes" / "fake_weather.py"
GOLDEN_PAGES = REPO_ROOT / "Tests" / "CloudyTests" / "Fixtures" / "golden"
DEBUG_EXPORTER = ".build/debug/cloudy_exporter"
RELEASE_EXPORTER = ".build/release/cloudy_exporter"


def in_repo(path: str | Path) -> Path:
    """`path` made absolute against the repository root (absolute paths stay as they are)."""
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def exporter_binary(*defaults: str) -> Path | None:
    """The cloudy_exporter to run: $CLOUDY_EXPORTER when it is set (even when it is not an
    executable: the caller then says so, rather than silently running another binary), else the
    first of `defaults` (relative to the repository root) that is an executable; None if none is."""
    chosen = os.environ.get("CLOUDY_EXPORTER")
    for candidate in [chosen] if chosen else defaults:
        path = in_repo(candidate)
        if os.access(path, os.X_OK) and path.is_file():
            return path
    return None


def shown(args) -> str:
    """A command (or one path) as a shell line, with paths in the repository made relative to it."""
    args = [args] if isinstance(args, (str, Path)) else args
    return " ".join(shlex.quote(str(a)) for a in args).replace(str(REPO_ROOT) + "/", "")
