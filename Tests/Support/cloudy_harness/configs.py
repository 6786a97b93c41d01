"""cloudy.yml files for test runs."""

import json
from pathlib import Path


def grid_places(count: int) -> list[tuple[str, float, float]]:
    """`count` places "Place 0000", … on a 40-column grid (unique coordinates, -60..65 latitude)."""
    out = []
    for i in range(count):
        row, col = divmod(i, 40)
        lat = round(-60 + (row % 26) * 5 + 0.25 * (row // 26), 4)
        lon = round(-180 + col * 9 + 0.5, 4)
        out.append((f"Place {i:04d}", lat, lon))
    return out


def _scalar(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return json.dumps(value) if isinstance(value, str) else str(value)


def exporter_config(provider_url: str, places, provider: str = "open-meteo", refresh: dict | None = None,
                    units: dict | None = None, forecast: dict | None = None, comment: str | None = None,
                    air_quality: dict | None = None) -> str:
    """The text of a cloudy.yml: `places` is [(name, latitude, longitude)]; `refresh`, `units`,
    `forecast` and `air_quality` are their sections' keys (a list value becomes a YAML flow list)."""
    lines = [f"# {comment}"] if comment else []
    lines += ["provider:", f"  name: {provider}", f"  url: {_scalar(provider_url)}"]
    for section, keys in (("refresh", refresh), ("units", units), ("forecast", forecast),
                          ("air_quality", air_quality)):
        if keys:
            lines.append(f"{section}:")
            lines += [f"  {key}: {_scalar(value)}" for key, value in keys.items()]
    lines.append("locations:")
    for name, lat, lon in places:
        lines += [f"  - name: {_scalar(name)}", f"    latitude: {lat}", f"    longitude: {lon}"]
    return "\n".join(lines) + "\n"


def write_exporter_config(path: Path, provider_url: str, places, **sections) -> Path:
    """`exporter_config(...)` written to `path`; returns `path`."""
    path.write_text(exporter_config(provider_url, places, **sections))
    return path
