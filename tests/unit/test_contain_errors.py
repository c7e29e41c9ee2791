"""What escapes a Lambda handler carries a type and a place, never the text of the exception (which
the X-Ray SDK would record and Lambda would log, and which may quote a record)."""

from __future__ import annotations

import json

import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from mnemo.observability import HandlerFailed, contain_errors

SECRET = "the vault combination is 31-7-42"


def failing_record() -> tuple:
    try:
        raise ValueError(f"bad record: {SECRET}")
    except ValueError as exc:
        return (type(exc), exc, exc.__traceback__)


def logged(caplog: pytest.LogCaptureFixture) -> dict:
    (record,) = [r for r in caplog.records if r.getMessage() == "invocation failed"]
    return {k: getattr(record, k) for k in ("error_type", "where", "record_errors")}


def test_an_escaping_exception_becomes_its_type_and_place(caplog):
    @contain_errors
    def handler(event, context):
        raise KeyError(SECRET)

    with pytest.raises(HandlerFailed) as raised:
        handler({}, None)

    assert str(raised.value).startswith("KeyError at test_contain_errors.py:")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    line = logged(caplog)
    assert line["error_type"] == "KeyError"
    assert SECRET not in json.dumps(line)


def test_a_failed_batch_is_logged_by_the_type_and_place_of_each_records_error(caplog):
    @contain_errors
    def handler(event, context):
        raise BatchProcessingError("All records failed processing.", [failing_record(), failing_record()])

    with pytest.raises(HandlerFailed) as raised:
        handler({}, None)

    assert str(raised.value).startswith("BatchProcessingError at ")
    line = logged(caplog)
    assert [e["error_type"] for e in line["record_errors"]] == ["ValueError", "ValueError"]
    assert SECRET not in json.dumps(line) and SECRET not in str(raised.value)


def test_an_answer_passes_through():
    assert contain_errors(lambda event, context: {"statusCode": 200})({}, None) == {"statusCode": 200}
