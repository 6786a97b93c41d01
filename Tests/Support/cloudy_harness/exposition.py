"""Reading the Prometheus text format: enough for the exporter's own pages and the golden files."""

import re
from pathlib import Path
from typing import NamedTuple

from .paths import GOLDEN_PAGES

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"')
_TYPE = re.compile(r"^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) ")


class Sample(NamedTuple):
    name: str
    labels: dict[str, str]
    value: float
    series: str  # name{labels} as written on the page


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def samples(text: str) -> list[Sample]:
    """Every sample line of a page, in order."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match:
            labels = {k: _unescape(v) for k, v in _LABEL.findall(match.group(2) or "")}
            out.append(Sample(match.group(1), labels, float(match.group(3)), match.group(1) + (match.group(2) or "")))
    return out


def values(text: str) -> dict[str, float]:
    """{'name{labels}': value} for every sample line; labels kept verbatim."""
    return {sample.series: sample.value for sample in samples(text)}


def family_sum(series_values: dict[str, float], name: str) -> float:
    """The sum of every series of family `name` in a `values()` dictionary."""
    return sum(v for k, v in series_values.items() if k == name or k.startswith(name + "{"))


def metric_names(text: str) -> set[str]:
    """Names a query can use: every `# TYPE` family and every sample name (histograms' _bucket,
    _sum, _count included)."""
    typed = {match.group(1) for line in text.splitlines() if (match := _TYPE.match(line))}
    return typed | {sample.name for sample in samples(text)}


def golden_pages() -> list[Path]:
    """The golden pages in the Prometheus text format (Tests/CloudyTests/Fixtures/golden/*.prom)."""
    return sorted(GOLDEN_PAGES.glob("*.prom"))


def golden_metric_names() -> set[str]:
    """Every metric name on the golden pages: the exporter's families in every unit family."""
    names = set()
    for page in golden_pages():
        names |= metric_names(page.read_text(encoding="utf-8"))
    return names
