"""Copy a memories table into one of today's layout: the way off the former ``recent`` LSI, which
DynamoDB cannot drop, so the stack's update replaces the table and this job copies its items::

    python -m mnemo.backends.aws.migrate --source OLD --target NEW [--segments 8] [--run copy]

An item is put only where the target has no newer state of it (a write that reached the new table
first wins, and copying twice changes nothing); the job is resumable (each segment's cursor saved
in the target after each page, ``pk = MIGRATION#<run>``), and a second pass under a new ``--run``
catches the writes of the switch. The procedure: docs/aws.md, "Moving a table off the recent LSI".
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from mnemo.backends.aws.errors import is_condition_failure
from mnemo.backends.aws.items import is_marker
from mnemo.backends.aws.maintenance import CHECKPOINT_PK

#: items a ``Scan`` page reads (each page is then saved as a checkpoint)
PAGE = 200


@dataclass(slots=True)
class Copied:
    """What a run did: items put, items the target already held newer, items not copied."""

    put: int = 0
    kept: int = 0
    skipped: int = 0
    #: segments finished (of ``segments``); a run stopped early (``max_pages``) has fewer
    done: list[int] = field(default_factory=list)

    def add(self, other: Copied) -> None:
        self.put += other.put
        self.kept += other.kept
        self.skipped += other.skipped
        self.done += other.done


def converted(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The item in today's layout and the condition of its put, or None when it is not copied."""
    pk, sk = item["pk"]["S"], item["sk"]["S"]
    if pk in (CHECKPOINT_PK,) or pk.startswith(("MIGRATION#", "CHG#")):
        return None
    if not sk.startswith("MEM#"):  # claims, standalone repair marks
        return dict(item), {"ConditionExpression": "attribute_not_exists(pk)"}
    out = dict(item)
    old_key = out.pop("lsi1sk", None)
    if old_key is not None and not is_marker(out):
        out["recent_sk"] = old_key  # the same "<updated_at>#<id>"
    condition = "attribute_not_exists(pk) OR #v < :v"
    if is_marker(out):
        condition += " OR (#v = :v AND attribute_not_exists(#del))"
    return out, {
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#v": "version", **({"#del": "deleted"} if is_marker(out) else {})},
        "ExpressionAttributeValues": {":v": out["version"]},
    }


def scan_segment(
    client: Any,
    checkpoints: str,
    key: dict[str, Any],
    request: dict[str, Any],
    handle: Callable[[list[dict[str, Any]]], None],
    *,
    max_pages: int | None = None,
) -> bool:
    """One segment of a parallel, consistent ``Scan`` (``request``: its table, segment, filter),
    resumable: from the cursor saved under ``key`` in the table ``checkpoints`` on, each page
    handed to ``handle`` and its cursor saved after it (``done`` once the segment is finished);
    ``max_pages`` stops early (tests). Whether the segment is done. The table copy and the index
    move (``reindex``) both walk their source this way."""
    saved = client.get_item(TableName=checkpoints, Key=key, ConsistentRead=True).get("Item")
    if saved is not None and saved["done"]["BOOL"]:
        return True
    request = {**request, "ConsistentRead": True}
    if saved is not None and "cursor" in saved:
        request["ExclusiveStartKey"] = json.loads(saved["cursor"]["S"])
    pages = 0
    while max_pages is None or pages < max_pages:
        out = client.scan(**request)
        handle(out.get("Items", []))
        last = out.get("LastEvaluatedKey")
        item = {**key, "done": {"BOOL": last is None}}
        if last is not None:
            item["cursor"] = {"S": json.dumps(last)}
        client.put_item(TableName=checkpoints, Item=item)
        pages += 1
        if last is None:
            return True
        request["ExclusiveStartKey"] = last
    return False


@dataclass
class TableCopy:
    """The copy of ``source`` into ``target``: run ``run``, in ``segments`` scan segments of
    ``page`` items a page."""

    client: Any
    source: str
    target: str
    _: KW_ONLY
    run: str = "copy"
    segments: int = 4
    page: int = PAGE

    def _checkpoint_key(self, segment: int) -> dict[str, Any]:
        return {"pk": {"S": f"MIGRATION#{self.run}"}, "sk": {"S": f"SEGMENT#{segment}/{self.segments}"}}

    def copy(self, *, workers: int = 4, max_pages: int | None = None) -> Copied:
        """Every segment (``workers`` at once); ``max_pages`` per segment stops early (tests)."""
        total = Copied()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(lambda s: self.copy_segment(s, max_pages=max_pages), range(self.segments)):
                total.add(part)
        total.done.sort()
        return total

    def copy_segment(self, segment: int, *, max_pages: int | None = None) -> Copied:
        """One segment of the parallel ``Scan``, from its checkpoint on."""
        result = Copied()
        request = {"TableName": self.source, "Segment": segment, "TotalSegments": self.segments, "Limit": self.page}

        def put(items: list[dict[str, Any]]) -> None:
            for item in items:
                self._put(item, result)

        key = self._checkpoint_key(segment)
        if scan_segment(self.client, self.target, key, request, put, max_pages=max_pages):
            result.done.append(segment)
        return result

    def _put(self, item: dict[str, Any], result: Copied) -> None:
        plan = converted(item)
        if plan is None:
            result.skipped += 1
            return
        new, condition = plan
        try:
            self.client.put_item(TableName=self.target, Item=new, **condition)
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
            result.kept += 1
            return
        result.put += 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mnemo.backends.aws.migrate",
        description="Copy a memories table (the former layout, with the recent LSI) into a table of today's "
        "layout; resumable, and safe to run again. Credentials and region as for the AWS CLI.",
    )
    parser.add_argument("--source", required=True, help="the old table's name")
    parser.add_argument("--target", required=True, help="the new table's name (created by the stack)")
    parser.add_argument("--segments", type=int, default=8, help="parallel Scan segments (fixed for a run)")
    parser.add_argument("--workers", type=int, default=4, help="segments copied at once")
    parser.add_argument("--run", default="copy", help="the run's name: the same resumes it, a new one copies anew")
    parser.add_argument("--endpoint-url", help="a DynamoDB endpoint other than AWS's (tests, DynamoDB Local)")
    args = parser.parse_args(argv)

    import boto3

    client = boto3.client("dynamodb", endpoint_url=args.endpoint_url)
    job = TableCopy(client, args.source, args.target, run=args.run, segments=args.segments)
    result = job.copy(workers=args.workers)
    print(
        json.dumps(
            {"put": result.put, "kept": result.kept, "skipped": result.skipped, "segments_done": len(result.done)}
        )
    )
    return 0 if len(result.done) == args.segments else 1


if __name__ == "__main__":
    raise SystemExit(main())
