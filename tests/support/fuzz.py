"""Fuzz budgets as Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE`` (tests/conftest.py loads it).

* ``dev`` — ``make check``: a handful of examples, enough to run every property once.
* ``ci`` — ``make test`` and CI, the default: the budgets the suites were tuned to on a loaded
  2-core machine.
* ``deep`` — ``make fuzz``: long searches, tens of minutes.

A profile sets Hypothesis's own defaults (``max_examples``, ``stateful_step_count``, no deadline:
a loaded machine makes any per-example deadline flaky). The property suites differ in what one
example costs (a LIKE pattern is microseconds, a Schemathesis call goes through a real server), so
each names its budget here and asks for it with ``examples("like")``: the table below is the one
place to read or change what a profile spends.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

ENV = "HYPOTHESIS_PROFILE"
PROFILES = ("dev", "ci", "deep")
DEFAULT = "ci"

#: examples per test (and steps per stateful run, the ``*_steps`` rows), by profile
BUDGETS: dict[str, dict[str, int]] = {
    # tests/unit/test_like_patterns.py: random LIKE patterns against SQLite's own LIKE
    "like": {"dev": 100, "ci": 1500, "deep": 20000},
    # tests/unit/test_matching_words.py: the word lookup against the reference rule
    "matching_words": {"dev": 50, "ci": 300, "deep": 3000},
    # tests/contract/test_isolation_property.py: call sequences of one workspace against another's
    "isolation": {"dev": 5, "ci": 30, "deep": 300},
    # tests/contract/test_hostile_arguments.py: hostile path/kind LIKE filters through the service
    "hostile_arguments": {"dev": 5, "ci": 40, "deep": 300},
    # tests/contract/test_state_machine.py: sequences of tool calls against the model
    "state_machine": {"dev": 5, "ci": 25, "deep": 300},
    "state_machine_steps": {"dev": 10, "ci": 15, "deep": 40},
    # tests/hardening/test_timestamps.py: RFC 3339 timestamps through a real server
    "timestamps": {"dev": 10, "ci": 60, "deep": 1000},
    # tests/hardening/test_schemathesis.py: examples per operation, and stateful steps
    "schemathesis": {"dev": 3, "ci": 10, "deep": 300},
    "schemathesis_steps": {"dev": 5, "ci": 10, "deep": 40},
}

for _name, _base in (("dev", 10), ("ci", 100), ("deep", 1000)):
    settings.register_profile(
        _name,
        max_examples=_base,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=True,
    )


def profile() -> str:
    """The profile this process runs: ``$HYPOTHESIS_PROFILE``, or ``ci``."""
    name = os.environ.get(ENV) or DEFAULT
    if name not in PROFILES:
        raise ValueError(f"{ENV}={name!r}: the profiles are {', '.join(PROFILES)} (tests/support/fuzz.py)")
    return name


def load() -> str:
    """Make the chosen profile Hypothesis's default; returns its name."""
    name = profile()
    settings.load_profile(name)
    return name


def examples(budget: str) -> int:
    """The number the current profile gives ``budget`` (a row of ``BUDGETS``)."""
    return BUDGETS[budget][profile()]
