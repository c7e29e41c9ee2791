"""The one timestamp type (``mnemo.models.common.Timestamp``): RFC 3339 in, UTC at millisecond
precision out, bounded to the instants a four-digit year can write in UTC — on every model that
reads one (tool arguments, export lines, stored records), so no value reaches arithmetic unchecked.
The whole grammar is fuzzed through the server in ``hardening/test_timestamps.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from mnemo.models.admin import ExportedMemory
from mnemo.models.common import TIMESTAMP_MAX, TIMESTAMP_MIN, TIMESTAMP_RULE, Timestamp, format_ts
from mnemo.models.tools import MemoryAddArgs, MemoryUpdateArgs
from pydantic import TypeAdapter, ValidationError

TIMESTAMP = TypeAdapter(Timestamp)


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2030-01-31T12:00:00Z", "2030-01-31T12:00:00.000Z"),
        ("2030-01-31t12:00:00z", "2030-01-31T12:00:00.000Z"),  # RFC 3339 §5.6: T and Z in either case
        ("2030-01-31T14:00:00.5+02:00", "2030-01-31T12:00:00.500Z"),
        ("2030-01-31T12:00:00.123456789Z", "2030-01-31T12:00:00.123Z"),  # kept to the millisecond
        ("2030-01-01T00:00:00-00:00", "2030-01-01T00:00:00.000Z"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ("9999-12-31T10:00:00-13:59", "9999-12-31T23:59:00.000Z"),
        ("0001-01-01T23:59:00+23:59", "0001-01-01T00:00:00.000Z"),
        ("0005-06-01T00:00:00Z", "0005-06-01T00:00:00.000Z"),  # four digits, as strftime would not write
    ],
)
def test_a_timestamp_is_read_into_utc_milliseconds(text, utc):
    assert TIMESTAMP.dump_json(TIMESTAMP.validate_python(text)).decode() == f'"{utc}"'


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("9999-12-31T23:59:59-12:00", "out of range"),
        ("0001-01-01T00:00:00+14:00", "out of range"),
        ("9999-12-31T23:59:59-23:59", "out of range"),
        ("2030-02-30T00:00:00Z", "no such date or time"),
        ("2030-01-01T24:00:00Z", "no such date or time"),
        ("0000-01-01T00:00:00Z", "no such date or time"),
        ("2030-06-30T23:59:60Z", "leap seconds"),
        ("2030-01-01T00:00:00+24:00", "offset"),
        ("2030-01-01T00:00:00", "not an RFC 3339 date-time"),  # no offset
        ("2030-01-01T00:00Z", "not an RFC 3339 date-time"),  # no seconds
        ("2030-01-01 00:00:00Z", "not an RFC 3339 date-time"),
        ("1700000000", "not an RFC 3339 date-time"),  # a Unix time is not RFC 3339
        ("２０３０-01-01T00:00:00Z", "not an RFC 3339 date-time"),  # full-width digits
        (1700000000, "not a string"),
        (True, "not a string"),
        (datetime(2030, 1, 1), "no offset"),
    ],
)
def test_anything_else_is_a_validation_error_never_an_overflow(value, reason):
    with pytest.raises(ValidationError) as raised:
        TIMESTAMP.validate_python(value)

    message = raised.value.errors()[0]["msg"]
    assert reason in message and TIMESTAMP_RULE in message


def test_the_bounds_are_the_first_and_last_instants_of_four_digit_years():
    assert format_ts(TIMESTAMP_MIN) == "0001-01-01T00:00:00.000Z"
    assert format_ts(TIMESTAMP_MAX) == "9999-12-31T23:59:59.999Z"
    plus_14 = timezone(timedelta(hours=14))
    with pytest.raises(ValidationError):
        TIMESTAMP.validate_python(datetime(1, 1, 1, tzinfo=plus_14))
    assert TIMESTAMP.validate_python(datetime(2030, 1, 1, 14, tzinfo=plus_14)) == datetime(2030, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("model", "arguments"),
    [
        (MemoryAddArgs, {"content": "x"}),
        (MemoryUpdateArgs, {"id": "mem_" + "0" * 26}),
    ],
)
def test_every_tool_argument_and_export_line_uses_the_bounded_type(model, arguments):
    with pytest.raises(ValidationError) as raised:
        model.model_validate({**arguments, "expires_at": "9999-12-31T23:59:59-12:00"})
    assert raised.value.errors()[0]["loc"] == ("expires_at",)
    assert TIMESTAMP_RULE in raised.value.errors()[0]["msg"]

    line = {
        "id": "mem_" + "0" * 26,
        "workspace_id": "ws_1",
        "project_id": "prj_1",
        "content": "x",
        "source": "s",
        "version": 1,
        "created_at": "0001-01-01T00:00:00+14:00",
        "updated_at": "2030-01-01T00:00:00Z",
    }
    with pytest.raises(ValidationError) as raised:
        ExportedMemory.model_validate(line)
    assert raised.value.errors()[0]["loc"] == ("created_at",)
