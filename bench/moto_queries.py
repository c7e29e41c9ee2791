"""What one DynamoDB ``Query`` costs moto as its table grows, with moto's own ``Table.query`` and
with the test suite's (``tests/support/moto_queries.py``: it walks the asked partition only) —
the figures docs/pitfalls.md quotes ("moto reads the whole table for every query").

    python -m bench.moto_queries                 # 30,000 items besides the 300 of the unit test
    python -m bench.moto_queries --items 5000 --queries 50

moto in process (``mock_aws``), the unit test's table (``tests/unit/test_moto_queries.py``: the
memories table's key schema and its ``recent`` and ``repair`` indexes), ``--items`` more items in
500 partitions; the mean of ``--queries`` queries of one partition, on the table and on ``recent``.
"""

from __future__ import annotations

import argparse
import json
import os
from functools import partial
from typing import Any

from bench.stats import mean_ms


def run(items: int, queries: int) -> dict[str, Any]:
    import boto3
    from moto import mock_aws
    from moto.dynamodb.models import dynamodb_backends

    from tests.support import moto_queries
    from tests.unit.test_moto_queries import QUERIES, TABLE, _fill

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "testing")
    out: dict[str, Any] = {"items": items + 300, "queries": queries}
    for label, patch in (("moto", moto_queries.uninstall), ("one_partition", moto_queries.install)):
        patch()
        with mock_aws():
            client = boto3.client("dynamodb", region_name="us-east-1")
            _fill(client)
            table = dynamodb_backends["123456789012"]["us-east-1"].get_table(TABLE)
            for n in range(items):  # straight into moto's table: filling through HTTP would take minutes
                table.put_item({"pk": {"S": f"W#{n % 500}"}, "sk": {"S": f"MEM#{n}"}, "recent_sk": {"S": f"{n}"}})
            row = {}
            for kind, query in (("table", QUERIES[0]), ("recent_index", QUERIES[4])):
                row[kind] = mean_ms(partial(client.query, TableName=TABLE, **query), queries)
            out[label] = row
    moto_queries.install()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.items, args.queries), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
