"""Timestamp arguments over the whole RFC 3339 grammar, through a real ``mnemo serve`` over REST and
MCP, on every backend: every answer is a success or a 400, never a 5xx, and a success stores the
instant converted to UTC at millisecond precision.

The strategy draws each field of ``date-time`` (RFC 3339 §5.6) over its full syntactic range and a
little beyond (month 00 and 13, day 32, hour 24, second 60 — a leap second —, offsets up to ±99:99,
years 0000 to 9999), with the edges weighted in: the offsets ±12:00, ±14:00 and ±23:59 on the first
and the last day a four-digit year can write (``9999-12-31T23:59:59-12:00`` and
``0001-01-01T00:00:00+14:00`` were 500s). The expected answer is computed here with integer
arithmetic on the fields, independently of the service's parser: the instant exists, falls between
0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in UTC and lies in the future → 200 with that
instant; otherwise 400. Budget: ``examples("timestamps")`` (tests/support/fuzz.py: 60 in ``make test``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.hardening.conftest import Outcome, mcp_call, rest_call
from tests.hardening.spec import assert_spec_error
from tests.support.fuzz import examples
from tests.support.server import RunningServer

pytestmark = [pytest.mark.slow]

DAY_MS = 86_400_000
MIN_MS = datetime(1, 1, 1).toordinal() * DAY_MS
MAX_MS = datetime(9999, 12, 31).toordinal() * DAY_MS + DAY_MS - 1


def _digits(n: int, width: int) -> str:
    return f"{n:0{width}d}"


def _field(valid: st.SearchStrategy[int], edges: list[int]) -> st.SearchStrategy[int]:
    return st.one_of(valid, st.sampled_from(edges))


@dataclass(frozen=True)
class Stamp:
    text: str
    fields: tuple[int, int, int, int, int, int]
    fraction: str
    offset_minutes: int | None  # None: the offset itself is invalid

    def expected_ms(self) -> int | None:
        """Milliseconds since 0001-01-01 minus one day (``toordinal`` days), or None when the text
        names no instant a timestamp may hold."""
        year, month, day, hour, minute, second = self.fields
        if self.offset_minutes is None or not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59):
            return None
        try:
            ordinal = datetime(year, month, day).toordinal()
        except ValueError:  # year 0, month 13, 30 February, …
            return None
        ms = (ordinal * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000) + int((self.fraction + "000")[:3])
        ms -= self.offset_minutes * 60_000
        return ms if MIN_MS <= ms <= MAX_MS else None


def format_ms(ms: int) -> str:
    days, rest = divmod(ms, DAY_MS)
    at = datetime.fromordinal(days) + timedelta(milliseconds=rest)
    return f"{at.year:04d}-{at:%m-%dT%H:%M:%S}.{rest % 1000:03d}Z"


@st.composite
def rfc3339(draw: st.DrawFn) -> Stamp:
    year = draw(_field(st.integers(0, 9999), [0, 1, 2, 1969, 1970, 2038, 9998, 9999]))
    month = draw(_field(st.integers(1, 12), [0, 1, 2, 12, 13, 99]))
    day = draw(_field(st.integers(1, 31), [0, 1, 28, 29, 30, 31, 32, 99]))
    hour = draw(_field(st.integers(0, 23), [0, 23, 24, 99]))
    minute = draw(_field(st.integers(0, 59), [0, 59, 60, 99]))
    second = draw(_field(st.integers(0, 59), [0, 59, 60, 61, 99]))
    fraction = draw(st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=12)))
    separator = draw(st.sampled_from("Tt"))
    kind = draw(st.sampled_from(["Z", "z", "numeric", "numeric"]))
    if kind in ("Z", "z"):
        offset_text, offset = kind, 0
    else:
        sign = draw(st.sampled_from("+-"))
        off_h = draw(_field(st.integers(0, 23), [0, 12, 14, 23, 24, 99]))
        off_m = draw(_field(st.integers(0, 59), [0, 30, 45, 59, 60, 99]))
        offset_text = f"{sign}{_digits(off_h, 2)}:{_digits(off_m, 2)}"
        valid = off_h <= 23 and off_m <= 59
        offset = (1 if sign == "+" else -1) * (off_h * 60 + off_m) if valid else None
    text = (
        f"{_digits(year, 4)}-{_digits(month, 2)}-{_digits(day, 2)}{separator}"
        f"{_digits(hour, 2)}:{_digits(minute, 2)}:{_digits(second, 2)}"
        + (f".{fraction}" if fraction else "")
        + offset_text
    )
    return Stamp(text, (year, month, day, hour, minute, second), fraction, offset)


_WRITTEN = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|([+-])(\d{2}):(\d{2}))")


def stamp(text: str) -> Stamp:
    """An edge written out, read into the strategy's fields (for ``@example`` and the edge test)."""
    found = _WRITTEN.fullmatch(text)
    assert found is not None, text
    fields = tuple(int(g) for g in found.group(1, 2, 3, 4, 5, 6))
    sign, off_h, off_m = found.group(9, 10, 11)
    offset: int | None = 0
    if sign is not None:
        valid = int(off_h) <= 23 and int(off_m) <= 59
        offset = (1 if sign == "+" else -1) * (int(off_h) * 60 + int(off_m)) if valid else None
    return Stamp(text, fields, found.group(7) or "", offset)  # type: ignore[arg-type]


EDGES = [
    "9999-12-31T23:59:59-12:00",  # the issue's: past the last instant once in UTC
    "0001-01-01T00:00:00+14:00",  # the issue's: before the first instant once in UTC
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59.999+00:00",  # the very last instant: accepted
    "9999-12-31T10:00:00-13:59",  # 23:59 UTC on the last day: accepted
    "9999-12-31T23:59:59.9999999Z",  # kept to the millisecond: .999
    "0001-01-01T00:00:00Z",  # the first instant: in the past, so 400
    "2999-02-29T00:00:00Z",  # no such day
    "2400-02-29T12:00:00+01:00",  # a leap day four centuries on
    "3000-06-30T23:59:60Z",  # a leap second
    "3000-01-01T00:00:00+24:00",
]


def expected(given_stamp: Stamp, now: datetime) -> tuple[int, str | None]:
    """(status, the stored expires_at) this text must get as ``expires_at`` at ``now``."""
    ms = given_stamp.expected_ms()
    if ms is None:
        return 400, None
    now_ms = (
        datetime(now.year, now.month, now.day).toordinal() * DAY_MS
        + ((now.hour * 60 + now.minute) * 60 + now.second) * 1000
    )
    if abs(ms - now_ms) < 3_600_000:  # too close to now to say which side of it the server sees
        return 0, None
    return (200, format_ms(ms)) if ms > now_ms else (400, None)


def assert_outcome(outcome: Outcome, status: int, stored: str | None, surface: str) -> None:
    assert outcome.status < 500 and outcome.code != "internal", (surface, outcome)
    if status == 0:
        assert outcome.ok or outcome.code == "invalid_request", (surface, outcome)
    elif status == 200:
        assert outcome.ok, (surface, outcome)
        assert outcome.body["memory"]["expires_at"] == stored, (surface, outcome)
    else:
        assert outcome.code == "invalid_request", (surface, outcome)
        assert_spec_error(400, json.dumps(outcome.body), "invalid_request")
        assert [d["loc"] for d in outcome.body["details"]] == [["expires_at"]], (surface, outcome)


SURFACES = {"rest": rest_call, "mcp": mcp_call}


@pytest.fixture(scope="module")
def target(hard_server: RunningServer) -> str:
    """A memory whose expiry the update half of the test changes."""
    outcome = rest_call(hard_server, "memory_add", {"content": "expiry target"})
    assert outcome.ok, outcome
    return str(outcome.body["memory"]["id"])


@settings(
    max_examples=examples("timestamps"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=rfc3339())
@example(case=stamp(EDGES[0]))
@example(case=stamp(EDGES[1]))
def test_every_rfc3339_expiry_is_stored_in_utc_or_refused_with_400(hard_server, target, case):
    check(hard_server, target, case)


@pytest.mark.parametrize("text", EDGES)
def test_the_edges_of_the_range(hard_server, target, text):
    assert expected(stamp(text), datetime.now(UTC))[0] in (200, 400)
    check(hard_server, target, stamp(text))


def check(server: RunningServer, target: str, case: Stamp) -> None:
    """memory_add and memory_update with ``case`` as expires_at, over REST and over MCP."""
    status, stored = expected(case, datetime.now(UTC))
    for surface, via in SURFACES.items():
        added = via(server, "memory_add", {"content": "expiring", "expires_at": case.text})
        assert_outcome(added, status, stored, f"{surface} add {case.text}")
        if added.ok:
            via(server, "memory_delete", {"id": added.body["memory"]["id"]})  # 404 if it expired meanwhile
        if status != 0:  # an expiry within the hour could make the shared target expire mid-run
            updated = via(server, "memory_update", {"id": target, "expires_at": case.text})
            assert_outcome(updated, status, stored, f"{surface} update {case.text}")
