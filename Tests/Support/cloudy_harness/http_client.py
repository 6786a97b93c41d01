"""A small HTTP client over urllib: one request per connection, every status returned, never raised."""

import json
import urllib.error
import urllib.request
from typing import NamedTuple

from .waiting import wait_until


class Response(NamedTuple):
    status: int
    headers: dict  # lower-case names
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


def fetch(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None,
          timeout: float = 30.0) -> Response:
    """The answer to one request, whatever its status; OSError when there is none (refused,
    reset, timed out)."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def post_json(url: str, value, timeout: float = 5.0) -> Response:
    return fetch(url, "POST", json.dumps(value).encode(), {"Content-Type": "application/json"}, timeout)


def status_of(url: str, timeout: float = 5.0) -> int | None:
    """The status of GET `url`, or None when nothing answers."""
    try:
        return fetch(url, timeout=timeout).status
    except OSError:
        return None


def wait_ok(url: str, timeout: float, process=None) -> None:
    """Until GET `url` answers 200: RuntimeError as soon as `process` (a Popen) has exited,
    TimeoutError when `timeout` seconds pass first."""
    def answered():
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"exited with status {process.returncode} before {url} answered 200")
        return status_of(url) == 200

    wait_until(answered, timeout, what=f"200 from {url}")
