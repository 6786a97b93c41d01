"""Waiting for something with a deadline: every wait here ends, with the last answer or an error."""

import time


def poll(attempt, timeout: float, interval: float = 0.05):
    """Calls `attempt()` until it returns something truthy or `timeout` seconds have passed;
    returns its last value (falsy when time ran out)."""
    deadline = time.monotonic() + timeout
    while True:
        value = attempt()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def wait_until(predicate, timeout: float, what: str, interval: float = 0.01):
    """Like `poll`, but TimeoutError("timed out after Ns waiting for WHAT") when time runs out."""
    value = poll(predicate, timeout, interval)
    if not value:
        raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
    return value
