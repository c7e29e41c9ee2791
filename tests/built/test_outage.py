"""An OpenSearch domain that refuses the function's role (403, what fine-grained access control
answers an unmapped IAM role) is an outage of the index, not a crash: a write succeeds (its
``similar`` search is refused, logged once, and lists nothing); a search answers 503; the stream
indexer marks each change it cannot index for repair and fails it, so the stream retries; each
refusal is logged once with its cause; the cleanup job repairs the index once OpenSearch answers again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.built.conftest import OUTAGE_CONTENT, BuiltStack, Run

pytestmark = [pytest.mark.slow]


def log_records(run: Run) -> list[Any]:
    """The function's log lines: JSON records (Powertools) or the runtime's plain text lines."""
    records: list[Any] = []
    for line in run.logs.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append(line)
    return records


def mentions_the_refusal(record: Any) -> bool:
    if isinstance(record, dict):
        return "403" in str(record.get("cause", "")) or "status:403" in json.dumps(record)
    return "403" in record


def test_a_write_while_the_index_refuses_succeeds_and_only_its_similar_is_lost(built_runs: dict[str, Run]):
    run = built_runs["write-403"]

    assert run.status("add_refused") == 200
    assert run.body("add_refused")["memory"]["content"] == OUTAGE_CONTENT
    assert run.body("add_refused")["similar"] == []
    # one request, the similar search (refused), never an index write; the refusal logged once
    assert [(c.method, c.path.split("/")[-1]) for c in run.opensearch] == [("POST", "_search")]
    records = [r for r in log_records(run) if mentions_the_refusal(r)]
    assert [r["message"] for r in records] == ["similar skipped: the index is unavailable; the memory is stored"]


def test_the_indexer_marks_what_the_index_refused_for_repair_and_fails_the_batch(
    built_runs: dict[str, Run], built_stack: BuiltStack
):
    run = built_runs["indexer-403"]

    # every record of the batch failed: Powertools raises (contained to its type), so the mapping
    # retries the whole batch, bisecting it
    assert run.results["stream_refused"] == {"name": "stream_refused", "error": "HandlerFailed", "where": "contained"}
    item = built_stack.facts["refused_item"]
    assert item["content"] == {"S": OUTAGE_CONTENT}
    assert item["repair_pk"]["S"].startswith("REPAIR#")


def test_each_change_the_index_refused_is_logged_once_with_its_cause(built_runs: dict[str, Run]):
    records = [r for r in log_records(built_runs["indexer-403"]) if mentions_the_refusal(r)]

    assert len(records) == 2, records
    assert {r["message"] for r in records} == {"index write failed; marked for repair"}
    assert {r["cause"] for r in records} == {"OpenSearch setup failed: 403"}


def test_a_search_refused_by_the_index_answers_503_and_reads_of_the_store_still_work(built_runs: dict[str, Run]):
    run = built_runs["read-403"]

    response = run.response("search_refused")
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["code"] == "unavailable"
    assert int(response["headers"]["Retry-After"]) > 0
    assert run.status("get_refused") == 200
    assert run.body("get_refused")["memory"]["content"] == OUTAGE_CONTENT


def test_a_refused_search_is_logged_once_with_its_cause(built_runs: dict[str, Run]):
    records = [r for r in log_records(built_runs["read-403"]) if mentions_the_refusal(r)]

    assert len(records) == 1, records
    assert records[0]["message"] == "backend unavailable"
    assert records[0]["cause"] == "OpenSearch search failed: 403 security_exception"


def test_an_mcp_write_while_the_index_refuses_succeeds_too(built_runs: dict[str, Run]):
    run = built_runs["mcp-403"]
    result = json.loads(run.response("mcp_add_refused")["body"])["result"]

    assert result["isError"] is False
    assert result["structuredContent"]["similar"] == []
    assert [(c.method, c.path.split("/")[-1]) for c in run.opensearch] == [("POST", "_search")]


def test_the_cleanup_job_repairs_what_was_written_while_the_index_refused(built_runs: dict[str, Run]):
    found = built_runs["read-after-repair"].body("search_repaired")["memories"]

    assert sorted(m["content"] for m in found) == [OUTAGE_CONTENT, OUTAGE_CONTENT + " (via MCP)"]
