"""A real engine or peer a test needs but this machine cannot run: a loud skip, or a failure when
its ``MNEMO_REQUIRE_*`` variable is 1 (as .ci/run sets them: CI must never skip silently)."""

from __future__ import annotations

import os
import sys
import warnings
from typing import NoReturn

import pytest


def unavailable(variable: str, what: str, reason: str) -> NoReturn:
    if os.environ.get(variable) == "1":
        pytest.fail(f"{variable}=1 but a real {what} cannot run here: {reason}", pytrace=False)
    message = f"SKIPPING real-{what} tests: {reason} (set {variable}=1 to make this an error)"
    warnings.warn(message, stacklevel=3)
    print(f"\n*** {message}", file=sys.stderr)
    pytest.skip(message)
