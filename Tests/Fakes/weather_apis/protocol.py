"""What every part of the fake shares: compact JSON, content types, the 400 refusal, and the
numbers of control bodies.
"""

import json

JSON_TYPE = "application/json; charset=utf-8"
HTML_TYPE = "text/html; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"


def dumps(value):
    """Compact UTF-8 JSON, like the real server."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class BadRequest(Exception):
    """A request the real API refuses with 400 {"error":true,"reason":...}."""


def number(body, key, default=None, minimum=0, integer=True):
    value = body.get(key, default)
    kinds = int if integer else (int, float)
    if not isinstance(value, kinds) or isinstance(value, bool) or value < minimum:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"'{key}' must be {kind} >= {minimum}, got {value!r}")
    return value
