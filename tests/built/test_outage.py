"""An OpenSearch domain that refuses the function's role (403, what fine-grained access control
answers an unmapped IAM role) is an outage of the index, not a crash: a write stays durable, is
marked for repair and succeeds; a search answers 503; each logs the cause once; the cleanup job
repairs the index once OpenSearch answers again."""

from __future__ import annotations

import json
from typing import Any

from tests.built.conftest import OUTAGE_CONTENT, BuiltStack, Run


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


def test_a_write_refused_by_the_index_is_durable_marked_for_repair_and_succeeds(
    built_runs: dict[str, Run], built_stack: BuiltStack
):
    run = built_runs["write-403"]

    assert run.status("add_refused") == 200
    memory = run.body("add_refused")["memory"]
    assert memory["content"] == OUTAGE_CONTENT
    item = built_stack.facts["refused_item"]
    assert item["content"] == {"S": OUTAGE_CONTENT}
    assert item["repair_pk"]["S"].startswith("REPAIR#")
    assert [c.method for c in run.opensearch] == ["HEAD"]  # the alias check was refused: nothing else tried


def test_a_refused_write_is_logged_once_with_its_cause(built_runs: dict[str, Run]):
    records = [r for r in log_records(built_runs["write-403"]) if mentions_the_refusal(r)]

    assert len(records) == 1, records
    assert records[0]["message"] == "index write failed; marked for repair"
    assert records[0]["cause"] == "OpenSearch setup failed: 403"


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


def test_an_mcp_write_refused_by_the_index_succeeds_too(built_runs: dict[str, Run]):
    result = json.loads(built_runs["mcp-403"].response("mcp_add_refused")["body"])["result"]

    assert result["isError"] is False
    assert len([r for r in log_records(built_runs["mcp-403"]) if mentions_the_refusal(r)]) == 1


def test_the_cleanup_job_repairs_what_was_written_while_the_index_refused(built_runs: dict[str, Run]):
    found = built_runs["read-after-repair"].body("search_repaired")["memories"]

    assert sorted(m["content"] for m in found) == [OUTAGE_CONTENT, OUTAGE_CONTENT + " (via MCP)"]
