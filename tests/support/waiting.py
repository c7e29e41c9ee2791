"""Waiting for a condition with a deadline: what a test on a loaded 2-core machine does instead of
sampling a count, a log line or a thread once (the sample can come before the work is done)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 10.0, what: str = "the condition", poll: float = 0.02) -> T:
    """``condition()``'s first truthy value, polled until ``timeout`` seconds have passed; on
    timeout an ``AssertionError`` naming ``what`` and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; last value: {value!r}")
        time.sleep(poll)
