"""What moto spends answering a read of memories, with its own serialiser and with the test suite's
(``tests/support/moto_responses.py``: attribute values written directly) — the figures
docs/pitfalls.md quotes ("moto's answers cost ten look-ups per attribute").

    python -m bench.moto_responses                  # 100 memories, 20 reads of each kind
    python -m bench.moto_responses --memories 50 --reads 50

moto in process (``mock_aws``), the memories table of template.yaml, ``--memories`` items as the
store writes them (``items.memory_item``: content, tags, path, a 256-dimension embedding); the
mean of ``--reads`` calls of a consistent ``BatchGetItem`` of all of them (what a search's
read-your-writes merge sends after a burst) and of a ``Query`` of their partition.
"""

from __future__ import annotations

import argparse
import json
import os
from functools import partial
from typing import Any

from bench.stats import mean_ms


def run(memories: int, reads: int) -> dict[str, Any]:
    import boto3
    from mnemo.backends.aws import Tables
    from mnemo.backends.aws.items import memory_item, memory_key, memory_pk
    from mnemo.local.tables import create_tables
    from mnemo.models.records import Embedding
    from mnemo.ports import Scope
    from moto import mock_aws

    from tests.support import moto_responses
    from tests.support.aws_stack import aws_settings
    from tests.support.records import memory_record

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "testing")
    cfg = aws_settings("http://unused", "http://unused")
    table = cfg.memories_table
    scope = Scope("ws_bench", "prj_bench")
    vector = [((n * 37) % 101 - 50) / 50 for n in range(256)]
    records = [
        memory_record(
            f"memory {n} of the bench, about the deploy window and the on-call rota",
            scope=scope,
            tags=["bench", f"t{n % 7}"],
            path=f"notes/{n % 5}",
            embedding=Embedding.of("bench-model", vector),
        )
        for n in range(memories)
    ]
    out: dict[str, Any] = {"memories": memories, "reads": reads}
    for label, patch in (("moto", moto_responses.uninstall), ("direct", moto_responses.install)):
        patch()
        with mock_aws():
            client = boto3.client("dynamodb", region_name="us-east-1")
            create_tables(client, Tables.from_settings(cfg).by_logical_id())
            for record in records:
                client.put_item(TableName=table, Item=memory_item(record))
            keys = [memory_key(scope, record.id) for record in records]
            requests = {
                "batch_get_item": {"RequestItems": {table: {"Keys": keys[:100], "ConsistentRead": True}}},
                "query": {
                    "TableName": table,
                    "KeyConditionExpression": "pk = :pk",
                    "ExpressionAttributeValues": {":pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}},
                },
            }
            row = {}
            for kind, request in requests.items():
                row[kind] = mean_ms(partial(getattr(client, kind), **request), reads)
            out[label] = row
    moto_responses.install()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100)
    parser.add_argument("--reads", type=int, default=20)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.memories, args.reads), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
