"""Posting lists kept in the process, in document order, so the top-k engine's co-occurrence
lookups (``SqlPostings.cooccurring``: which of a term's documents hold the others) run as sorted
searches in numpy instead of a B-tree descent per posting and joined key inside SQLite.

**Never stale.** Every write that changes a key's postings gives the key a new revision
(``index_terms.rev``, a random 62-bit number: never reused, not even after a rollback or by another
process; a writer that sets none — an older version's process on the same file — gets one from the
database's triggers). A list is kept under the revision it was read at and is used only when the
query's plan read that same revision, so a change by any connection — another thread, another
``mnemo serve`` worker — makes the kept list unused (and replaced when read again). A write of this
process also moves a kept list to the new revision with the change noted (the document inserted or
removed), applied when the list is next used (a write pays a note per key, not a copy of each
list), so a memory just added does not make its own terms' lists cold for the search ``similar``
runs next.

**Bounded.** At most ``MOST_POSTINGS`` postings in all (12 bytes each), the least recently used
list dropped first; a list is read whole only when that costs no more than the lookups it spares
(``SqlPostings``), so a cold process pays about what it paid before.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

import numpy as np

#: the most postings kept by one index (a process): ~12 bytes each, 12 MB (at 100,000 memories the
#: bench's calls kept 250,000-350,000)
MOST_POSTINGS = 1_000_000

#: a list: its documents in ascending order and the key's impact in each
Postings = tuple[np.ndarray, np.ndarray]


def new_rev() -> int:
    """A revision no key ever had: random (from the OS, so forked workers differ), 62 bits, never 0
    (a key without a revision: ``index.SqliteSearchIndex.migrate``'s triggers give it one)."""
    return secrets.randbits(62) or 1


#: a kept list takes at most this many noted changes; past them it is dropped (read again when used)
MOST_NOTED = 256

#: a change noted on a kept list: the document, and its impact (None: removed)
Change = tuple[int, int | None]


class KeptLists:
    """Keys' posting lists in document order, each under the revision it holds (one per key)."""

    def __init__(self, most: int = MOST_POSTINGS) -> None:
        self.most = most
        #: key → (revision, documents, impacts, changes noted since, in order)
        self._lists: OrderedDict[int, tuple[int, np.ndarray, np.ndarray, tuple[Change, ...]]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._lists)

    @property
    def held(self) -> int:
        """Postings kept (changes noted but not applied yet not counted)."""
        return self._held

    def get(self, key: int, rev: int) -> Postings | None:
        """The key's list at revision ``rev``, if kept."""
        entry = self._lists.get(key)
        if entry is None or entry[0] != rev:
            return None
        _, docs, impacts, noted = entry
        if noted:
            docs, impacts = _apply(docs, impacts, noted)
            self.put(key, rev, docs, impacts)
        else:
            with self._lock:
                if key in self._lists:
                    self._lists.move_to_end(key)
        return docs, impacts

    def put(self, key: int, rev: int, docs: np.ndarray, impacts: np.ndarray, noted: tuple[Change, ...] = ()) -> None:
        """Keep the key's list at ``rev`` (``docs`` ascending), in place of any other revision."""
        if len(docs) > self.most:
            return
        with self._lock:
            old = self._lists.pop(key, None)
            if old is not None:
                self._held -= len(old[1])
            self._lists[key] = (rev, docs, impacts, noted)
            self._held += len(docs)
            while self._held > self.most:
                _, (_, dropped, _, _) = self._lists.popitem(last=False)
                self._held -= len(dropped)

    def load(self, key: int, rev: int, docs: str | None, impacts: str | None) -> Postings:
        """Keep a list read from the table as two comma-separated texts in the same (any) order
        (SQLite's ``group_concat``: parsed in C, a third of the cost of a row per posting); the list."""
        if not docs or not impacts:
            held, weights = np.zeros(0, np.int64), np.zeros(0, np.int32)
        else:
            held = np.fromstring(docs, dtype=np.int64, sep=",")
            weights = np.fromstring(impacts, dtype=np.int32, sep=",")
            order = np.argsort(held, kind="stable")
            held, weights = held[order], weights[order]
        self.put(key, rev, held, weights)
        return held, weights

    def changed(self, key: int, old_rev: int, new_rev: int, doc: int, impact: int | None) -> None:
        """A write moved ``key`` from ``old_rev`` to ``new_rev`` by inserting ``doc`` with ``impact``
        (None: by removing it): a list kept at ``old_rev`` moves to ``new_rev`` with the change noted."""
        entry = self._lists.get(key)
        if entry is None or entry[0] != old_rev:
            return
        _, docs, impacts, noted = entry
        with self._lock:
            if self._lists.get(key) is not entry:
                return  # replaced or dropped meanwhile
            if len(noted) >= MOST_NOTED:
                del self._lists[key]
                self._held -= len(docs)
            else:  # the same arrays: nothing to count, and the list keeps its place in the order
                self._lists[key] = (new_rev, docs, impacts, (*noted, (doc, impact)))

    def clear(self) -> None:
        with self._lock:
            self._lists.clear()
            self._held = 0


def _apply(docs: np.ndarray, impacts: np.ndarray, noted: tuple[Change, ...]) -> Postings:
    """A list with changes applied in order (the last change of a document decides)."""
    last = dict(noted)
    touched = np.array(sorted(last), dtype=np.int64)
    if len(docs):
        at = np.minimum(np.searchsorted(docs, touched), len(docs) - 1)
        present = at[docs[at] == touched]
        if len(present):
            docs, impacts = np.delete(docs, present), np.delete(impacts, present)
    added = [doc for doc in touched.tolist() if last[doc] is not None]
    if added:
        new = np.array(added, dtype=np.int64)
        at = np.searchsorted(docs, new)
        docs = np.insert(docs, at, new)
        impacts = np.insert(impacts, at, np.array([last[doc] for doc in added], dtype=np.int32))
    return docs, impacts
