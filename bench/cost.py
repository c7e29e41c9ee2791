"""Cost per call on AWS: the DynamoDB and OpenSearch requests each tool call makes, counted
against moto (server mode, real HTTP) and a real OpenSearch node, priced per million calls.

Counting reuses the test stack (``tests/support``): botocore's ``before-call`` event for
DynamoDB and a wrapper around opensearch-py's transport for OpenSearch (``RequestCounter``).
A call is counted end to end as REST or MCP makes it: ``Service.authenticate`` (one key read)
plus ``Service.invoke``, in a warm process (tables and the index exist, one call made before).
A write's change then reaches the index through the table's stream: the stream indexer's
requests for it (``tests.support.stream.StreamDrain``, the indexer's own handler) are counted
apart and priced with the call; reading the stream costs nothing (DynamoDB Streams reads by
Lambda are free), and the indexer's Lambda time is left out like the API's.

Prices (us-east-1, on-demand, as published in 2025; change them here):

* DynamoDB on-demand: $0.625 per million write request units, $0.125 per million read request
  units. Assumed units: a write of an item up to 1 KB is 1 WRU (Mnemo's records are
  ~0.3–1.5 KB, so a record write is taken as 2 WRU to be safe; rate-limit and idempotency
  items are small: 1 WRU; a delete marker's ``UpdateItem`` is billed on the larger of the item
  before and after, taken as 1 like the others); a strongly consistent read up to 4 KB is 1 RRU;
  a Query page 1 RRU per 4 KB read, taken as 2 (a search's Query of the recent changes reads
  nothing in a project unchanged for a minute: 1 RRU).
* OpenSearch is billed by the instance-hour, not per request: a request's cost is the domain's
  hourly price divided by the requests it serves in an hour. Assumed domain: 2 × t3.medium.search
  ($0.073 / h each) = $0.146 / h, amortised at two utilisations, 5 and 50 requests a second on
  average. Storage (EBS), data transfer, Lambda and API Gateway are left out.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

WRU_PER_MILLION = 0.625
RRU_PER_MILLION = 0.125
#: request units per DynamoDB operation (see the module docstring)
UNITS = {
    "GetItem": ("r", 1),
    "BatchGetItem": ("r", 1),
    "Query": ("r", 2),
    "PutItem": ("w", 2),
    "UpdateItem": ("w", 1),
    "DeleteItem": ("w", 1),
    "TransactWriteItems": ("w", 4),
}
OPENSEARCH_HOURLY = 2 * 0.073
OPENSEARCH_RATES = (5, 50)  # average requests per second the domain serves


def available() -> tuple[bool, str]:
    if importlib.util.find_spec("mnemo.backends.aws") is None:
        return False, "the AWS backend (mnemo.backends.aws) is not on this branch yet"
    sys.path.insert(0, str(ROOT))
    if importlib.util.find_spec("tests.support.aws_stack") is None:
        return False, "tests/support/aws_stack.py (moto server, request counter) is missing"
    from tests.support.opensearch_node import available as node_available

    ok, reason = node_available()
    return (True, "") if ok else (False, f"no OpenSearch node can run here: {reason}")


def price(dynamodb: dict[str, int], opensearch: dict[str, int]) -> dict[str, float]:
    """Dollars per million calls of one call that made these requests."""
    ddb = 0.0
    for op, n in dynamodb.items():
        kind, units = UNITS.get(op, ("w", 1))
        ddb += n * units * (WRU_PER_MILLION if kind == "w" else RRU_PER_MILLION)
    requests = sum(opensearch.values())
    out = {"dynamodb": round(ddb, 3)}
    for rate in OPENSEARCH_RATES:
        out[f"opensearch_at_{rate}rps"] = round(requests * OPENSEARCH_HOURLY / (rate * 3600) * 1_000_000, 3)
    return out


def _measure(backend: Any, cfg: Any) -> dict[str, Any]:
    from mnemo.embedding import default_embedder
    from mnemo.models.records import RateLimits
    from mnemo.service import tenancy
    from mnemo.service.pipeline import Service

    from tests.support.aws_stack import RequestCounter
    from tests.support.stream import StreamDrain

    counter = RequestCounter(backend)
    stream = StreamDrain(cfg)
    svc = Service(backend, embedder=default_embedder())
    workspace, _ = tenancy.create_workspace(backend, "cost")
    backend.tenants.set_limits(workspace.id, RateLimits(search=1_000_000, write=1_000_000))
    key = tenancy.create_key(backend, workspace.id, label="cost", scopes=["admin"]).plain
    header = f"Bearer {key}"

    def call(tool: str, **arguments: Any) -> Any:
        return svc.invoke(tool, svc.authenticate(header), arguments).result

    call("memory_add", content="warm up the index and the clients")
    call("memory_search", q="warm")
    stream.drain(backend)
    costs: dict[str, Any] = {}

    def measure(name: str, tool: str, **arguments: Any) -> Any:
        counter.reset()
        result = call(tool, **arguments)
        ddb, osr = dict(counter.dynamodb), dict(counter.opensearch)
        counter.reset()
        stream.drain(backend)  # the change (if any) through the stream indexer
        indexer = {"dynamodb": dict(counter.dynamodb), "opensearch": dict(counter.opensearch)}
        total_osr = {op: osr.get(op, 0) + indexer["opensearch"].get(op, 0) for op in {*osr, *indexer["opensearch"]}}
        total_ddb = {op: ddb.get(op, 0) + indexer["dynamodb"].get(op, 0) for op in {*ddb, *indexer["dynamodb"]}}
        costs[name] = {
            "dynamodb": ddb,
            "opensearch": osr,
            "indexer": indexer,
            "per_million_usd": price(total_ddb, total_osr),
        }
        return result

    memory = measure("memory_add", "memory_add", content="数据库延迟 cost of a call", tags=["cost"]).memory
    measure("memory_get", "memory_get", id=memory.id)
    measure("memory_update", "memory_update", id=memory.id, content="数据库延迟 cost of an update")
    measure("memory_search (q)", "memory_search", q="cost")
    measure("memory_search (empty q)", "memory_search", q="")
    from mnemo.service.catalog import TOOLS

    for tool, field in (("search_memory", "query"), ("recall", "query"), ("recall_context", "query")):
        if tool in TOOLS:
            measure(tool, tool, **{field: "cost 延迟"})
            if tool == "search_memory":
                measure("search_memory (no match)", tool, **{field: "nothingmatchesthis"})
    measure("memory_delete", "memory_delete", id=memory.id)
    if "forget" in TOOLS:
        other = call("memory_add", content="to be forgotten").memory
        stream.drain(backend)  # its add's change is not the forget's
        measure("forget", "forget", reference=other.id)
    return costs


def run() -> dict[str, Any]:
    ok, reason = available()
    if not ok:
        return {"status": "not run", "reason": reason}
    from mnemo.backends.aws import AwsBackend

    from bench.aws import local_stack
    from tests.support.aws_stack import moto_server

    with local_stack(moto_server) as cfg:
        backend = AwsBackend.from_settings(cfg)
        try:
            costs = _measure(backend, cfg)
        finally:
            backend.close()
    return {
        "status": "done",
        "prices": {
            "dynamodb_wru_per_million": WRU_PER_MILLION,
            "dynamodb_rru_per_million": RRU_PER_MILLION,
            "opensearch_hourly": OPENSEARCH_HOURLY,
            "opensearch_rates_rps": list(OPENSEARCH_RATES),
        },
        "tools": costs,
    }


def markdown(res: dict[str, Any]) -> list[str]:
    rates = res["prices"]["opensearch_rates_rps"]
    header = ["tool call", "DynamoDB requests", "OpenSearch requests", "stream indexer", "DynamoDB $/M calls"]
    header += [f"OpenSearch $/M at {r} req/s" for r in rates]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, c in res["tools"].items():
        ddb = ", ".join(f"{n} {op}" for op, n in sorted(c["dynamodb"].items())) or "0"
        osr = ", ".join(f"{n} {op}" for op, n in sorted(c["opensearch"].items())) or "0"
        indexer = c.get("indexer") or {}
        idx = ", ".join(
            f"{n} {engine} {op}"
            for engine in ("dynamodb", "opensearch")
            for op, n in sorted((indexer.get(engine) or {}).items())
        )
        p = c["per_million_usd"]
        cells = [name, ddb, osr, idx or "0", p["dynamodb"], *(p[f"opensearch_at_{r}rps"] for r in rates)]
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    return [
        "Requests per call counted against moto + a real OpenSearch node (authentication included), "
        "priced as `bench/cost.py` states: DynamoDB on-demand $0.625 / M WRU and $0.125 / M RRU; "
        f"OpenSearch ${res['prices']['opensearch_hourly']:.3f} / h amortised over the request rates shown. "
        "*stream indexer*: what the change then costs on its way to the index (counted by draining the "
        "table's stream through the indexer's handler after the call); the prices include it.",
        "",
        *lines,
        "",
    ]
