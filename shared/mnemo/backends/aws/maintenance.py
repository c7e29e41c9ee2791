"""The AWS backend's side of the cleanup job (``mnemo.ports.Maintenance``): the record store's and
the index's maintenance methods, composed. Cleanup is not a request path, so it may walk whole
tables:

* expiry and the store→index walk page the memories table with a bounded ``Scan`` (memory items
  only), resuming from the persisted ``LastEvaluatedKey``; each page of records is compared with
  the index by one multi-get;
* the index→store walk pages the index with ``search_after`` on (project_id, id), tombstones
  included, and looks the page's records up with ``BatchGetItem`` (strongly consistent);
* repair marks come from the sparse GSI ``repair`` (``REPAIR#0`` … ``REPAIR#7``), shard by shard;
* a tombstone is purged by a delete that carries the ``_seq_no`` / ``_primary_term`` it was read
  with, so a tombstone rewritten since is left alone; an entry without a record gets a tombstone
  at ``version + 1`` (external versioning refuses it if anything newer is there);
* checkpoints are items of the memories table (``DynamoMemoryStore.checkpoint``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from mnemo.backends.aws.index import OpenSearchIndex, doc_id
from mnemo.backends.aws.store import DynamoMemoryStore
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark


class AwsMaintenance:
    def __init__(self, store: DynamoMemoryStore, index: OpenSearchIndex) -> None:
        self.store = store
        self.index = index

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        return self.store.scan_records(cursor, limit, expired_at=now)

    def store_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        page = self.store.scan_records(cursor, limit)
        entries = self.index.entries(page.items)
        items = [Comparison(r, entries.get(doc_id(r.project_id, r.id))) for r in page.items]
        return Page(items, page.cursor, examined=page.examined)

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        entries, last = self.index.walk(cursor, limit)
        records = self.store.get_many((e.scope, e.memory_id) for e in entries if e.scope and e.memory_id)
        by_doc = {doc_id(r.project_id, r.id): r for r in records}
        return Page([Comparison(by_doc.get(e.ref), e) for e in entries], last)

    def repair_marks(self, cursor: str | None, limit: int) -> Page[RepairMark]:
        page = self.store.repair_marks(cursor, limit)
        # a mark whose record is gone (its delete could not reach the index) names the entry to drop
        marks = [
            m if m.record is not None else replace(m, entry=self.index.entry_for(m.scope, m.memory_id, m.version))
            for m in page.items
        ]
        return Page(marks, page.cursor)

    def clear_repair(self, mark: RepairMark) -> None:
        self.store.clear_repair(mark)

    def drop(self, entry: IndexEntry) -> bool:
        return self.index.drop(entry)

    def purge(self, entry: IndexEntry) -> bool:
        return self.index.purge(entry)

    def checkpoint(self, name: str) -> str | None:
        return self.store.checkpoint(name)

    def save_checkpoint(self, name: str, cursor: str | None) -> None:
        self.store.save_checkpoint(name, cursor)
