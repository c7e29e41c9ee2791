"""Move the index behind the alias to a new index of another mapping, with no downtime: the way to
the ``hnsw`` vector layout (``index.knn`` is fixed at an index's creation, so it cannot be put
onto the live index)::

    python -m mnemo.backends.aws.reindex [--vectors hnsw] [--segments 4] [--settle-s 30]
    python -m mnemo.backends.aws.reindex --drop <old index>     # once the switch is checked

Four steps, each idempotent, so a run stopped anywhere is started again: create the target (with
the migration's alias, which the writers then write to first), settle, back-fill it from the
table with external versions (a segment's cursor saved after each page), and switch the alias
atomically. What each step guarantees: docs/operations.md, "Changing the index's mapping".
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from mnemo.backends.aws.errors import either, index_errors, outage
from mnemo.backends.aws.items import record_from_item
from mnemo.backends.aws.mapping import (
    IndexSetup,
    Vectors,
    doc_id,
    document,
    index_body,
    layout_of,
    vector_field,
    vector_mapping,
)
from mnemo.backends.aws.migrate import scan_segment
from mnemo.backends.errors import translate_errors
from mnemo.errors import IndexUnavailable

#: items a ``Scan`` page reads (each page is then saved as a checkpoint)
PAGE = 200
#: seconds between the target's creation and its back-fill: longer than a writer trusts what it
#: read of the write targets (``mapping.LAYOUT_TTL_S``) plus a write's time (timeout and retry)
SETTLE_S = 30.0
_VERSION = re.compile(r"^(?P<alias>.+)-v(?P<n>\d+)$")


@dataclass(slots=True)
class Moved:
    """What a run did."""

    source: str = ""
    target: str = ""
    #: documents back-filled, and those the target already held at a newer version
    indexed: int = 0
    kept: int = 0
    #: segments finished (of ``segments``); a run stopped early (``max_pages``) has fewer
    done: list[int] = field(default_factory=list)
    #: whether the alias is on the target now (also true when an earlier run switched it)
    switched: bool = False

    def add(self, other: Moved) -> None:
        self.indexed += other.indexed
        self.kept += other.kept
        self.done += other.done


@translate_errors(either(outage, index_errors("migration")))
class IndexMigration:
    """One migration of the index behind ``setup.alias`` to an index of the ``vectors`` layout."""

    def __init__(
        self,
        dynamodb: Any,
        table: str,
        setup: IndexSetup,
        *,
        vectors: Vectors = "hnsw",
        segments: int = 4,
        page: int = PAGE,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.dynamodb = dynamodb
        self.table = table
        self.setup = setup
        self.client: OpenSearch = setup.client
        self.alias = setup.alias
        self.vectors: Vectors = vectors
        self.segments = segments
        self.page = page
        self.settle_s = settle_s

    # -- the steps ------------------------------------------------------------------------------

    def run(self, *, workers: int = 4, max_pages: int | None = None) -> Moved:
        """Every step from where an earlier run stopped; ``max_pages`` per segment stops the
        back-fill early, without switching (tests)."""
        source = self.source()
        target = self.target()
        if target is None and self.layout(source) == self.vectors:
            return Moved(source, source, switched=True)  # done already (or never needed)
        if target is None:
            target = self.create(source)
        moved = Moved(source, target)
        self.settle(target)
        moved.add(self.backfill(target, workers=workers, max_pages=max_pages))
        if len(moved.done) < self.segments:
            return moved
        self.switch(source, target)
        moved.switched = True
        return moved

    def source(self) -> str:
        """The index the alias writes to."""
        held = self.client.indices.get_alias(index=self.alias, name=self.alias)
        for index, body in held.items():
            if (body.get("aliases") or {}).get(self.alias, {}).get("is_write_index", len(held) == 1):
                return str(index)
        raise RuntimeError(f"no write index behind {self.alias}")

    def target(self) -> str | None:
        """The index of a migration under way (behind ``<alias>-next``), if any."""
        if not self.client.indices.exists_alias(index=self.setup.next_alias, name=self.setup.next_alias):
            return None
        return str(next(iter(self.client.indices.get_alias(index=self.setup.next_alias, name=self.setup.next_alias))))

    def layout(self, index: str) -> Vectors:
        return layout_of(self.client.indices.get_mapping(index=index)[index]["mappings"])

    def create(self, source: str) -> str:
        """The target, created with the new mapping and the migration's alias (one request)."""
        match = _VERSION.match(source)
        target = f"{self.alias}-v{int(match['n']) + 1 if match else 2}"
        settings = self.client.indices.get_settings(index=source)[source]["settings"]["index"]
        body = index_body(
            self.vectors,
            shards=int(settings["number_of_shards"]),
            replicas=int(settings["number_of_replicas"]),
            refresh_interval=str(settings.get("refresh_interval", self.setup.refresh_interval)),
        )
        # every vector field the source maps, in the new layout
        held = self.client.indices.get_mapping(index=source)[source]["mappings"].get("properties") or {}
        for name, spec in held.items():
            if spec.get("type") == "knn_vector":
                body["mappings"]["properties"][name] = vector_mapping(int(spec["dimension"]), self.vectors)
        body["aliases"] = {self.setup.next_alias: {}}
        self.client.indices.create(index=target, body=body)
        return target

    def settle(self, target: str) -> None:
        """Wait until ``settle_s`` after the target's creation (every writer writes to it by then)."""
        settings = self.client.indices.get_settings(index=target)[target]["settings"]["index"]
        created_s = int(settings["creation_date"]) / 1000
        time.sleep(max(0.0, created_s + self.settle_s - time.time()))

    def backfill(self, target: str, *, workers: int = 4, max_pages: int | None = None) -> Moved:
        """Every segment of the table (``workers`` at once), from its checkpoint on."""
        total = Moved()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(lambda s: self._segment(target, s, max_pages), range(self.segments)):
                total.add(part)
        total.done.sort()
        return total

    def switch(self, source: str, target: str) -> None:
        """One atomic ``POST _aliases``: the alias (and its writes) to the target, the
        migration's alias away. The target is refreshed first, so the switch shows no gap."""
        self.client.indices.refresh(index=target)
        actions = [
            {"add": {"index": target, "alias": self.alias, "is_write_index": True}},
            {"remove": {"index": source, "alias": self.alias}},
            {"remove": {"index": target, "alias": self.setup.next_alias}},
        ]
        self.client.indices.update_aliases(body={"actions": actions})
        self.setup.forget()

    def drop(self, index: str) -> None:
        """Delete a former index — never the one behind the alias or a migration's."""
        behind = set(self.client.indices.get_alias(index=self.alias, name=self.alias))
        if index in behind or index == self.target():
            raise ValueError(f"{index} is in use ({self.alias} or {self.setup.next_alias}): not dropped")
        self.client.indices.delete(index=index)

    # -- the back-fill ------------------------------------------------------------------------

    def _checkpoint_key(self, target: str, segment: int) -> dict[str, Any]:
        return {"pk": {"S": f"MIGRATION#index-{target}"}, "sk": {"S": f"SEGMENT#{segment}/{self.segments}"}}

    def _segment(self, target: str, segment: int, max_pages: int | None) -> Moved:
        result = Moved()
        request = {
            "TableName": self.table,
            "Segment": segment,
            "TotalSegments": self.segments,
            "Limit": self.page,
            "FilterExpression": "begins_with(#sk, :mem) AND attribute_not_exists(#del)",
            "ExpressionAttributeNames": {"#sk": "sk", "#del": "deleted"},
            "ExpressionAttributeValues": {":mem": {"S": "MEM#"}},
        }
        mapped: set[str] = set()

        def index(items: list[dict[str, Any]]) -> None:
            self._index(target, [record_from_item(item) for item in items], mapped, result)

        key = self._checkpoint_key(target, segment)
        if scan_segment(self.dynamodb, self.table, key, request, index, max_pages=max_pages):
            result.done.append(segment)
        return result

    def _index(self, target: str, records: list[Any], mapped: set[str], result: Moved) -> None:
        if not records:
            return
        dims = {r.embedding.dim for r in records if r.embedding is not None}
        for dim in dims - {int(f.rpartition("_")[2]) for f in mapped}:
            properties = self.client.indices.get_mapping(index=target)[target]["mappings"].get("properties") or {}
            if vector_field(dim) not in properties:
                body = {"properties": {vector_field(dim): vector_mapping(dim, self.vectors)}}
                self.client.indices.put_mapping(index=target, body=body)
            mapped.add(vector_field(dim))
        lines: list[dict[str, Any]] = []
        for record in records:
            action = {
                "_index": target,
                "_id": doc_id(record.project_id, record.id),
                "routing": record.project_id,
                "version": record.version,
                "version_type": "external_gte",
            }
            lines += [{"index": action}, document(record)]
        out = self.client.bulk(body=lines)
        for entry in out["items"]:
            status = int(entry["index"]["status"])
            if status == 409:
                result.kept += 1  # the stream wrote a newer version already
            elif status < 300:
                result.indexed += 1
            else:
                error = (entry["index"].get("error") or {}).get("type", "")
                raise IndexUnavailable(cause=f"OpenSearch back-fill failed: {status} {error}"[:200])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mnemo.backends.aws.reindex",
        description="Move the index behind the alias to a new index of another vector layout, with no downtime "
        "(create, dual writes, back-fill from the table, atomic alias switch); resumable: run it again after an "
        "interruption. The table, alias and endpoints come from the MNEMO_* settings (as the functions').",
    )
    parser.add_argument("--vectors", choices=["hnsw", "exact"], default="hnsw", help="the new index's vector layout")
    parser.add_argument("--segments", type=int, default=4, help="parallel Scan segments (fixed for a migration)")
    parser.add_argument("--workers", type=int, default=4, help="segments back-filled at once")
    parser.add_argument("--settle-s", type=float, default=SETTLE_S, help="seconds between creation and back-fill")
    parser.add_argument("--drop", metavar="INDEX", help="delete this former index instead (never the live one)")
    args = parser.parse_args(argv)

    from mnemo.backends.aws.clients import dynamodb_client, opensearch_client
    from mnemo.config import Settings

    cfg = Settings()
    client = opensearch_client(cfg)
    setup = IndexSetup(client, cfg.opensearch_index)
    job = IndexMigration(
        dynamodb_client(cfg),
        cfg.memories_table,
        setup,
        vectors=args.vectors,
        segments=args.segments,
        settle_s=args.settle_s,
    )
    if args.drop:
        job.drop(args.drop)
        print(json.dumps({"dropped": args.drop}))
        return 0
    moved = job.run(workers=args.workers)
    print(
        json.dumps(
            {
                "source": moved.source,
                "target": moved.target,
                "indexed": moved.indexed,
                "kept": moved.kept,
                "segments_done": len(moved.done),
                "switched": moved.switched,
            }
        )
    )
    return 0 if moved.switched else 1


if __name__ == "__main__":
    raise SystemExit(main())
