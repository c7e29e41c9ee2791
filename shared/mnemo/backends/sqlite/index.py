"""The full-text index: an inverted index of ``mnemo.text``'s analysis, in the store's database,
with each term's postings ordered best first so a query reads only the top of each list.

Tables (``schema.sql``):

* ``index_terms`` — a project's dictionary: ``key`` → id and document frequency. A key is a stem
  (a CJK term or a number is its own stem); an English word that differs from its stem is also
  indexed as ``=`` + the word, so ``recall``'s prefixes match words as they are written
  (``deploym`` finds ``deployment``, whose stem is ``deploy``).
* ``postings`` (``term``, ``impact``, ``doc``) — the primary key orders each key's documents by
  impact, best first; the index ``postings_doc`` (``doc``, ``term``) serves random access and
  deletes. ``doc`` is the memory's ``seq``.
* ``index_docs`` — the index's own document table (project, memory id → doc, version): how it
  finds a record's postings again after the record is gone, as OpenSearch finds a document by its
  ``_id``.
* ``index_stats`` — documents per project (the N of the IDF).

**Scoring.** BM25 (k1 1.2, b 0.75) with the field weights of the OpenSearch backend (content 1,
tags 0.6, path 0.4, summed into one weighted frequency, as FTS5's ``bm25`` did). A key's *impact*
in a document is its BM25 term weight without the IDF, × ``SCALE``; the length is normalised
against a fixed pivot (``PIVOT`` terms) instead of the project's average, so a document's impacts
depend on the document alone and never go stale. The IDF, ``ln(1 + (N - df + ½) / (df + ½))``, is
applied at query time. A query term matching several keys (a prefix, or a stem and the words that
start with the term) takes the best of them.

**Top k without scoring every match** (Fagin's threshold algorithm): a search reads the best
``size`` postings of each key, completes the scores of the documents it saw by random access
(``postings_doc``), and knows that no unseen document can score above the *threshold*, the sum of
each term's IDF × the last impact read for it. Documents that score strictly above it are final:
their records are read and filtered, and once ``limit`` of them pass, they are the answer, in
score order, ties newest first. Otherwise ``size`` grows; a key read to its end means no unseen
document holds that term. Past ``MAX_SIZE`` postings a key, an ``all`` query reads its rarest
term's postings to the end (exact, and as costly as that term is common), and an ``any`` query
(``recall``: best effort) answers from the documents it has seen — it reads at most ``MAX_TOTAL``
postings over all its keys and looks up at most ``MAX_LOOKUPS`` documents, scoring the others by
what was read of them; when its filters reject every document read, it scores the records that
pass them instead (``_Search.passing``). So a query of a very common word
costs what its top postings cost, not what its matches do.
"""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo import text
from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import INDEX_VERSION, Database, outage, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.backends.sqlite.vectors import VectorSearch
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit, IndexQuery, VectorQuery

#: BM25 parameters, the field weights (content, tags, path), the length pivot and the fixed-point scale
K1, B = 1.2, 0.75
FIELD_WEIGHTS = (1.0, 0.6, 0.4)
PIVOT = 40.0
SCALE = 10_000

#: the prefix of a key that holds a word as written (only words that differ from their stem)
SURFACE = "="

#: a prefix matches at most this many keys (the most frequent), beside the term's own stem; a word
#: the project holds (its stem is a key: its inflections match already) at most ``MAX_EXPANSIONS_KNOWN``
MAX_EXPANSIONS, MAX_EXPANSIONS_KNOWN = 8, 2

#: postings read per key in the first round (at least), and at most before the fallback
MIN_SIZE, MAX_SIZE = 32, 4096
#: an ``any`` query (recall: best effort) reads at most this many postings over all its keys
#: (each key at least ``MIN_SIZE``): a query of sixteen common words expands into ~40 keys, and
#: reading 4,096 of each in Python cost 150-300 ms at 10,000 memories (2,048 in all: under 50 ms)
MAX_TOTAL = 2048
#: and scores at most this many documents by random access (their impacts looked up), the rest by
#: what was read of them: with sixteen common terms the bounds stay loose, and lookups of thousands
#: of documents cost 300 ms at 10,000 memories
MAX_LOOKUPS = 256

#: a group of terms whose postings number this share of the project's documents or more (1/8)
#: is left out of the co-occurrence lookups of an ``any`` query (``_Search.common``)
COMMON_SHARE = 8

#: when an ``all`` query of several terms has no answer after ``DRIVE_AFTER`` rounds, it looks up,
#: inside SQLite, which documents hold all its terms, if its rarest term has at most ``DRIVE`` postings
DRIVE, DRIVE_AFTER = 8192, 1

#: the characters after which no other sorts: ``key < prefix + _TOP`` bounds a prefix range
_TOP = "\U0010ffff"


def document_keys(record: MemoryRecord) -> dict[str, int]:
    """The index keys of one record, each with its impact (see the module docstring)."""
    fields = (text.terms(record.content), text.terms(" ".join(record.tags)), text.terms(record.path or ""))
    length = sum(len(words) for words in fields)
    weighted: dict[str, float] = defaultdict(float)
    for weight, words in zip(FIELD_WEIGHTS, fields, strict=True):
        for word, stem in zip(words, text.stems(words), strict=True):
            weighted[stem] += weight
            if stem != word:
                weighted[SURFACE + word] += weight
    norm = K1 * (1 - B + B * length / PIVOT)
    return {key: max(1, round(SCALE * f * (K1 + 1) / (f + norm))) for key, f in weighted.items()}


def idf(df: int, docs: int) -> float:
    return math.log(1 + (max(docs, df) - df + 0.5) / (df + 0.5))


def drop_document(conn: sqlite3.Connection, project_id: str, memory_id: str) -> bool:
    """Remove a memory's document (its postings, its dictionary counts, its row); False when the
    index held none. Also used by the cleanup job (``SqliteMaintenance.drop``)."""
    found = conn.execute(
        "DELETE FROM index_docs WHERE project_id = ? AND id = ? RETURNING doc", (project_id, memory_id)
    ).fetchone()
    if found is None:
        return False
    _drop_postings(conn, project_id, found["doc"])
    conn.execute("UPDATE index_stats SET docs = docs - 1 WHERE project_id = ?", (project_id,))
    return True


def _drop_postings(conn: sqlite3.Connection, project_id: str, doc: int) -> None:
    terms = [row[0] for row in conn.execute("SELECT term FROM postings WHERE doc = ?", (doc,))]
    if not terms:
        return
    ids = json.dumps(terms)
    conn.execute("DELETE FROM postings WHERE doc = ?", (doc,))
    conn.execute("UPDATE index_terms SET df = df - 1 WHERE id IN (SELECT value FROM json_each(?))", (ids,))
    conn.execute("DELETE FROM index_terms WHERE df <= 0 AND id IN (SELECT value FROM json_each(?))", (ids,))


# -- query planning ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Term:
    """One query term as the index sees it: the keys it matches (id → df) and its IDF."""

    text: str
    keys: dict[int, int]
    idf: float = 0.0


def _plan(conn: sqlite3.Connection, query: IndexQuery) -> tuple[list[_Term], int]:
    """The query's terms as the index sees them, and the project's document count."""
    project = query.scope.project_id
    docs_row = conn.execute("SELECT docs FROM index_stats WHERE project_id = ?", (project,)).fetchone()
    docs = docs_row[0] if docs_row else 0
    out = []
    for term in query.terms:
        keys: dict[int, int] = {}
        row = conn.execute(
            "SELECT id, df FROM index_terms WHERE project_id = ? AND key = ?", (project, term.stem)
        ).fetchone()
        if row is not None:
            keys[row[0]] = row[1]
        if term.prefix:
            most = MAX_EXPANSIONS_KNOWN if keys else MAX_EXPANSIONS
            keys.update(_expansions(conn, project, term, exclude=keys, most=most))
        out.append(_Term(term.text, keys, idf(max(keys.values(), default=0), docs)))
    return out, docs


def _expansions(
    conn: sqlite3.Connection, project: str, term: text.QueryTerm, exclude: dict[int, int], most: int
) -> dict[int, int]:
    """The keys a prefix term matches beyond its stem: stems (and CJK terms) that start with it,
    and words as written that start with it whose stem is not among those; the ``most`` most
    frequent."""
    ranges = [(term.text, term.text + _TOP)]
    if not text.is_cjk(term.text):
        ranges.append((SURFACE + term.text, SURFACE + term.text + _TOP))
    found: list[tuple[int, int, str]] = []
    for low, high in ranges:
        found += conn.execute(
            "SELECT df, id, key FROM index_terms WHERE project_id = ? AND key >= ? AND key < ?"
            " ORDER BY df DESC LIMIT ?",
            (project, low, high, 4 * most),
        ).fetchall()
    stems = {key for _, _, key in found if not key.startswith(SURFACE)} | {term.stem}
    chosen = [
        (df, key_id)
        for df, key_id, key in found
        if key_id not in exclude and not (key.startswith(SURFACE) and text.stem(key[1:]) in stems)
    ]
    chosen.sort(reverse=True)
    return {key_id: df for df, key_id in chosen[:most]}


# -- the threshold algorithm -------------------------------------------------------------------


def _in(keys: Sequence[int]) -> str:
    """``IN (?,?,…)`` for a term's keys: the statement's text depends only on how many there are."""
    return "IN (" + ",".join("?" * len(keys)) + ")"


Scored = tuple[float, str, tuple[int, ...]]  # score, updated_at, each term's impact (0: not held)


@dataclass(slots=True)
class _Search:
    """One top-k search over the postings of a plan (the module docstring has the idea).

    Sorted reads (``read_to``) note each document's best impact per term as far as read. A read
    document is *judged* — in order of the most it could score, and only while that could make
    the answer — by one statement per batch inside SQLite: its record is read and filtered and,
    unless what was read already gives its exact score, every term's impact in it is looked up
    (random access through ``postings_doc``)."""

    conn: sqlite3.Connection
    terms: list[_Term]
    every: bool  # mode "all": a document must hold every term
    where: str  # the filter over ``memories m``
    params: tuple[Any, ...]  # the scope's and the filter's parameters
    #: documents read so far, with each term's best impact as far as read
    partial: dict[int, list[int]] = field(default_factory=dict)
    #: documents that pass the filters (and hold every term, for ``all``), exactly scored
    scored: dict[int, Scored] = field(default_factory=dict)
    #: documents judged (scored, or known to fail the filters or a term), or left out for good
    judged: set[int] = field(default_factory=set)
    read: dict[int, int] = field(default_factory=dict)  # postings read per key
    last: dict[int, int] = field(default_factory=dict)  # impact of the last posting read per key
    exhausted: set[int] = field(default_factory=set)
    owners: dict[int, list[int]] = field(default_factory=dict)  # key → the terms it serves
    #: each key's postings read, best first
    lists: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: documents read for two or more terms
    multi: set[int] = field(default_factory=set)
    #: the terms in groups that go together (the character pairs of one CJK word); each other term alone
    groups: list[list[int]] = field(default_factory=list)
    group_of: list[int] = field(default_factory=list)  # term → its group
    #: every document holding terms of two or more groups (``any``), once worked out; a document
    #: outside it holds terms of one group at most, besides those of ``common``
    several: set[int] | None = None
    #: the terms of a group left out of ``several`` (a very common one: looking up which documents
    #: hold it would go through most of the others' postings, and it adds little to a score)
    common: list[int] = field(default_factory=list)
    #: documents an ``any`` search may still score by random access (None: no bound); past it, a
    #: document is scored by what was read of it (best effort, as ``recall`` is)
    lookups_left: int | None = None

    def __post_init__(self) -> None:
        for i, term in enumerate(self.terms):
            for key in term.keys:
                self.owners.setdefault(key, []).append(i)
            previous = self.terms[i - 1].text if i else ""
            pair = len(term.text) == 2 and text.is_cjk(term.text)
            if self.groups and pair and len(previous) == 2 and text.is_cjk(previous) and previous[1] == term.text[0]:
                self.groups[-1].append(i)  # the next character pair of the same CJK word
            else:
                self.groups.append([i])
            self.group_of.append(len(self.groups) - 1)

    def read_to(self, size: int, keys: Iterable[int] | None = None) -> None:
        """Read every (given) key's postings up to the ``size`` best."""
        partial, n = self.partial, len(self.terms)
        for key in self.owners if keys is None else keys:
            done = self.read.get(key, 0)
            if key in self.exhausted or done >= size:
                continue
            owners = self.owners[key]
            rows = self.conn.execute(
                "SELECT doc, impact FROM postings WHERE term = ? ORDER BY impact DESC, doc DESC LIMIT ? OFFSET ?",
                (key, size - done, done),
            ).fetchall()
            multi = self.multi
            if len(owners) == 1:  # the usual case, kept tight: this loop runs once per posting read
                i = owners[0]
                for doc, impact in rows:
                    seen = partial.get(doc)
                    if seen is None:
                        seen = partial[doc] = [0] * n
                    elif not seen[i]:
                        multi.add(doc)  # read before, for another term
                    if impact > seen[i]:
                        seen[i] = impact
            else:
                for doc, impact in rows:
                    seen = partial.get(doc)
                    if seen is None:
                        seen = partial[doc] = [0] * n
                    multi.add(doc)  # the key serves several terms
                    for i in owners:
                        if impact > seen[i]:
                            seen[i] = impact
            self.lists.setdefault(key, []).extend(rows)
            self.read[key] = done + len(rows)
            if rows:
                self.last[key] = rows[-1][1]
            if len(rows) < size - done:
                self.exhausted.add(key)

    def caps(self) -> list[float]:
        """Per term, the most it can add to a document not read for it (0: its keys were read to
        their end, so no such document holds it)."""
        out = []
        for term in self.terms:
            open_keys = [key for key in term.keys if key not in self.exhausted]
            out.append(term.idf * max(self.last.get(key, SCALE * 3) for key in open_keys) if open_keys else 0.0)
        return out

    def threshold(self) -> float:
        """No document unread so far scores above this (-inf: every qualifying one was read)."""
        caps = self.caps()
        if self.every and not all(caps):
            return -math.inf  # a document holding every term holds a term read to its end: read
        if not any(caps):
            return -math.inf
        if self.several is None:
            return sum(caps)
        # documents holding terms of several groups were all judged: the others hold one group's
        # terms at most, and the common group's
        others = [sum(caps[i] for i in group) for group in self.groups if group != self.common]
        return max(others, default=0.0) + sum(caps[i] for i in self.common)

    def holding_several_groups(self) -> dict[int, list[int]]:
        """Every document that holds terms of two or more groups, with each term's impact in it:
        each group's documents (but the commonest group's) that hold a term of a commoner group
        (lookups only, inside SQLite; a document found by several of these has its impacts from
        each). Terms of one group (a CJK word's character pairs) go together anyway: looking up
        which documents hold several of them would find most of their documents."""
        order = sorted((g for g in self.groups if g != self.common), key=self._group_df)
        found: dict[int, list[int]] = {}
        for i, group in enumerate(order[:-1]):
            later = [t for g in order[i + 1 :] for t in g]
            for driver in group:
                self._cooccurring(driver, later, every=False, into=found, also=self.common)
        return found

    def _cooccurring(
        self, driver: int, others: list[int], *, every: bool, into: dict[int, list[int]], also: Sequence[int] = ()
    ) -> None:
        """The documents of term ``driver`` that hold all (``every``) or any of the ``others``,
        with the impacts of the driver, of the others and of the terms ``also`` in them, merged
        into ``into``. One statement: the driver's postings, each joined to the others' through
        ``postings_doc`` (a join costs a third of a correlated subquery; a term of several keys may
        give a document several rows, merged here by their best impact)."""
        # CROSS JOIN: SQLite's inner join that keeps this order (the driver's postings first); with
        # several plain JOINs the planner may start from another term's whole posting list
        join = "CROSS JOIN" if every else "LEFT JOIN"
        joined = [*others, *also]
        joins = "".join(
            f" {join if n < len(others) else 'LEFT JOIN'} postings q{n} ON q{n}.doc = p.doc"
            f" AND q{n}.term {_in(list(self.terms[t].keys))}"
            for n, t in enumerate(joined)
        )
        held = "" if every else " AND (" + " OR ".join(f"q{n}.impact IS NOT NULL" for n in range(len(others))) + ")"
        keys = list(self.terms[driver].keys)
        columns = ", ".join(f"q{n}.impact" for n in range(len(joined)))
        sql = f"SELECT p.doc, p.impact, {columns} FROM postings p{joins} WHERE p.term {_in(keys)}{held}"
        params = [*(key for t in joined for key in self.terms[t].keys), *keys]
        n = len(self.terms)
        for doc, impact, *found in self.conn.execute(sql, params):
            impacts = into.get(doc)
            if impacts is None:
                impacts = into[doc] = [0] * n
            if impact > impacts[driver]:
                impacts[driver] = impact
            for t, value in zip(joined, found, strict=True):
                if value and value > impacts[t]:
                    impacts[t] = value

    def take_best(self, candidates: dict[int, list[int]], limit: int) -> None:
        """Of documents whose impacts are all known, score the best ones that pass the filters:
        in score order, in batches, until ``limit`` pass and the next scores less (ties at the
        ``limit``-th score are all checked: the newest of them wins)."""
        idfs = [t.idf for t in self.terms]
        ranked = sorted(
            ((sum(w * i for w, i in zip(idfs, impacts, strict=True)), doc) for doc, impacts in candidates.items()),
            reverse=True,
        )
        start, batch = 0, max(2 * limit, 16)
        while start < len(ranked):
            kth = self.kth(limit)
            if ranked[start][0] < kth:
                break
            chunk = ranked[start : start + batch]
            start += batch
            batch *= 2
            self.check({doc: (score, tuple(candidates[doc])) for score, doc in chunk})
        self.judged.update(candidates)

    def _group_df(self, group: list[int]) -> int:
        return sum(sum(self.terms[t].keys.values()) for t in group)

    def several_cost(self) -> int:
        """Lookups ``holding_several_groups`` makes (at most): each posting of a group but the
        commonest, once per key of the commoner groups."""
        order = sorted((g for g in self.groups if g != self.common), key=self._group_df)
        keys = [sum(len(self.terms[t].keys) for t in g) for g in order]
        return sum(self._group_df(g) * sum(keys[i + 1 :]) for i, g in enumerate(order[:-1]))

    def kth(self, limit: int) -> float:
        """The ``limit``-th best exact score so far (-inf while fewer are known)."""
        if len(self.scored) < limit:
            return -math.inf
        scores = sorted((score for score, _, _ in self.scored.values()), reverse=True)
        return scores[limit - 1]

    def likely_kth(self, limit: int) -> float:
        """What the ``limit``-th best score will be at least, if the documents read pass the
        filters (only to decide when to judge): the ``limit``-th best of what was read of the
        documents at the head of each key's postings."""
        heads = {doc for rows in self.lists.values() for doc, _ in rows[:limit]}
        if len(heads) < limit:
            return -math.inf
        idfs = [t.idf for t in self.terms]
        least = (sum(w * i for w, i in zip(idfs, self.partial[doc], strict=True)) for doc in heads)
        return heapq.nlargest(limit, least)[-1]

    def judge(self, limit: int) -> None:
        """Judge the read documents that could make the answer, most promising first: those read
        for several terms, and the head of each key's postings down to where even its best
        impact with every other term's most could not reach the ``limit``-th best score."""
        caps = self.caps()
        heads = {doc for rows in self.lists.values() for doc, _ in rows[:limit]}
        # documents read for several terms first: the head scan below bounds a document by what
        # it was read for plus the others' caps, which holds only for documents read for one term
        self._judge(self.multi | heads, limit, caps)
        kth = self.kth(limit)
        candidates = set()
        for key, rows in self.lists.items():
            owners = self.owners[key]
            rest = self._rest(owners, caps)
            weight = sum(self.terms[i].idf for i in owners if len(self.terms[i].keys) == 1)
            # a term of several keys may hold a better impact in a key not read that far
            spread = [(self.terms[i].idf, caps[i]) for i in owners if len(self.terms[i].keys) > 1]
            for doc, impact in rows:
                most = weight * impact + sum(max(w * impact, cap) for w, cap in spread) + rest
                if most < kth:
                    break  # and so is every later posting of this key
                candidates.add(doc)
        self._judge(candidates, limit, caps)

    def _rest(self, owners: list[int], caps: list[float]) -> float:
        """The most a document read for these terms can get from the others: any term's, or
        (``several`` known, the document not in it) its own group's and the common group's."""
        if self.several is None:
            return sum(caps) - sum(caps[i] for i in owners)
        group = self.groups[self.group_of[owners[0]]]
        common = sum(caps[i] for i in self.common)
        if group == self.common:
            others = [sum(caps[i] for i in g) for g in self.groups if g != self.common]
            return common - sum(caps[i] for i in owners) + max(others, default=0.0)
        return sum(caps[i] for i in group) - sum(caps[i] for i in owners if i in group) + common

    def _judge(self, docs: Iterable[int], limit: int, caps: list[float]) -> None:
        # runs once per document considered: kept tight (local names, no per-document lists of groups)
        idfs = [t.idf for t in self.terms]
        several_keys = [len(t.keys) > 1 for t in self.terms]
        terms = range(len(idfs))
        candidates: list[tuple[float, float, int, bool]] = []  # (at most, at least, doc, exact)
        several_docs, judged, partial, every = self.several, self.judged, self.partial, self.every
        common = self.common
        common_set = set(common)
        others = [g for g in self.groups if g != common]  # the groups a document may hold one of
        group_of = [others.index(g) if g != common else -1 for g in (self.groups[self.group_of[i]] for i in terms)]
        for doc in docs:
            if doc in judged:
                continue
            seen = partial[doc]
            most_of = [0.0] * len(idfs)  # per term: the most it can add
            least = 0.0
            exact = qualifies = True
            for i in terms:
                impact, cap = seen[i], caps[i]
                known = idfs[i] * impact
                least += known
                if impact and (not several_keys[i] or known >= cap):
                    most_of[i] = known  # read for this term: nothing unread of it can be better
                elif not impact and not cap:
                    qualifies = qualifies and not every  # read to its end without this document
                else:
                    most_of[i] = known if known > cap else cap
                    exact = False
            if not qualifies:
                judged.add(doc)
                continue
            if several_docs is None or doc in several_docs:
                most = sum(most_of)
            else:
                # it holds one group's terms at most, besides the common group's: the group it was
                # read for, or (read for the common group only) the one that would add the most
                held = next((group_of[i] for i in terms if seen[i] and i not in common_set), -1)
                pool = [others[held]] if held >= 0 else others
                sums = [sum(most_of[i] for i in g) for g in pool]
                most = max(sums, default=0.0) + sum(most_of[i] for i in common)
                exact = all(most_of[i] == idfs[i] * seen[i] for g in pool for i in g) and all(
                    most_of[i] == idfs[i] * seen[i] for i in common
                )
            candidates.append((most, least, doc, exact))
        candidates.sort(reverse=True)
        if self.lookups_left == 0:  # spent: rank by what was read, check the best few
            rest = sorted(((least, doc) for _, least, doc, _ in candidates), reverse=True)
            self.check({doc: (least, tuple(self.partial[doc])) for least, doc in rest[: 4 * limit]})
            return
        kth, start, batch = self.kth(limit), 0, max(limit, 16)
        while start < len(candidates) and candidates[start][0] >= kth:
            chunk = candidates[start : start + batch]
            start += batch
            batch *= 2
            self.check({doc: (least, tuple(self.partial[doc])) for _, least, doc, exact in chunk if exact})
            inexact = [(least, doc) for _, least, doc, exact in chunk if not exact]
            if self.lookups_left is not None and len(inexact) >= self.lookups_left:
                allowed, self.lookups_left = self.lookups_left, 0
                self.evaluate([doc for _, doc in inexact[:allowed]])
                # no lookups left: the rest ranked by what was read of them, the best few checked
                rest = [*inexact[allowed:], *((least, doc) for _, least, doc, exact in candidates[start:] if not exact)]
                rest.sort(reverse=True)
                self.check({doc: (least, tuple(self.partial[doc])) for least, doc in rest[: 4 * limit]})
                return
            if self.lookups_left is not None:
                self.lookups_left -= len(inexact)
            self.evaluate([doc for _, doc in inexact])
            kth = self.kth(limit)

    def evaluate(self, docs: Sequence[int]) -> None:
        """Score these documents exactly (those that pass the filters, and hold every term for
        ``all``), in one statement."""
        docs = [doc for doc in docs if doc not in self.judged]
        if not docs:
            return
        self.judged.update(docs)
        n = len(self.terms)
        # each term's postings joined through postings_doc (``all``: all must be there); a term
        # of several keys may give a document several rows, merged by their best impact
        # CROSS JOIN keeps the order: the candidates first, then one lookup per term through
        # postings_doc (with four plain JOINs the planner started from a term's whole posting list:
        # 20-30 ms for 50 candidates of memory_search "prearkflirwal 基准测试" at 100k, now 1)
        join = "CROSS JOIN" if self.every else "LEFT JOIN"
        joins = "".join(
            f" {join} postings q{i} ON q{i}.doc = m.seq AND q{i}.term {_in(list(t.keys))}"
            for i, t in enumerate(self.terms)
        )
        columns = ", ".join(f"q{i}.impact" for i in range(n))
        sql = (
            f"SELECT m.seq, m.updated_at, {columns} FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
            f"{joins} WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        )
        idfs = [t.idf for t in self.terms]
        params: list[Any] = [json.dumps(docs), *(key for t in self.terms for key in t.keys), *self.params]
        found_impacts: dict[int, tuple[str, list[int]]] = {}
        for doc, updated_at, *found in self.conn.execute(sql, params):
            seen = found_impacts.get(doc)
            if seen is None:
                seen = found_impacts[doc] = (updated_at, [0] * n)
            for i, value in enumerate(found):
                if value and value > seen[1][i]:
                    seen[1][i] = value
        for doc, (updated_at, impacts) in found_impacts.items():
            self.scored[doc] = (sum(w * i for w, i in zip(idfs, impacts, strict=True)), updated_at, tuple(impacts))

    def check(self, docs: dict[int, tuple[float, tuple[int, ...]]]) -> None:
        """Filter documents whose score is known already."""
        docs = {doc: v for doc, v in docs.items() if doc not in self.judged}
        if not docs:
            return
        self.judged.update(docs)
        sql = (
            "SELECT m.seq, m.updated_at FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
            f" WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        )
        for doc, updated_at in self.conn.execute(sql, (json.dumps(list(docs)), *self.params)):
            score, impacts = docs[doc]
            self.scored[doc] = (score, updated_at, impacts)

    def holding_every_term(self, limit: int) -> None:
        """Every document that holds every term (the rarest term's documents that hold the others,
        looked up inside SQLite, with their impacts), the best of them scored."""
        rarest = min(range(len(self.terms)), key=lambda t: sum(self.terms[t].keys.values()))
        found: dict[int, list[int]] = {}
        self._cooccurring(rarest, [t for t in range(len(self.terms)) if t != rarest], every=True, into=found)
        self.take_best({doc: impacts for doc, impacts in found.items() if doc not in self.judged}, limit)

    def passing(self) -> None:
        """Score every document that passes the filters and holds a term: the project's records
        filtered inside SQLite, each passing one's impacts looked up through ``postings_doc``. For
        a filter the best postings hardly pass (``recall`` with a narrow ``path_filter``), where
        reading every posting of common terms in Python would cost what all their matches do."""
        keys = [key for term in self.terms for key in term.keys]
        slots: dict[int, list[int]] = {}
        for i, term in enumerate(self.terms):
            for key in term.keys:
                slots.setdefault(key, []).append(i)
        sql = (
            "SELECT m.seq, m.updated_at, q.term, q.impact FROM memories m CROSS JOIN postings q"
            f" ON q.doc = m.seq AND q.term {_in(keys)} WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        )
        n, idfs = len(self.terms), [t.idf for t in self.terms]
        found: dict[int, tuple[str, list[int]]] = {}
        for doc, updated_at, key, impact in self.conn.execute(sql, (*keys, *self.params)):
            seen = found.get(doc)
            if seen is None:
                seen = found[doc] = (updated_at, [0] * n)
            for i in slots[key]:
                if impact > seen[1][i]:
                    seen[1][i] = impact
        for doc, (updated_at, impacts) in found.items():
            self.scored[doc] = (sum(w * i for w, i in zip(idfs, impacts, strict=True)), updated_at, tuple(impacts))
        self.judged.update(found)

    def matched(self, doc: int) -> tuple[str, ...]:
        impacts = self.scored[doc][2]
        return tuple(term.text for term, impact in zip(self.terms, impacts, strict=True) if impact)


@translate_errors(outage)
class SqliteSearchIndex:
    def __init__(
        self,
        db: Database,
        *,
        min_size: int = MIN_SIZE,
        max_size: int = MAX_SIZE,
        max_total: int = MAX_TOTAL,
        max_lookups: int = MAX_LOOKUPS,
        drive: int = DRIVE,
        drive_after: int = DRIVE_AFTER,
    ) -> None:
        self.db = db
        self.vectors = VectorSearch(db)
        self.min_size = min_size
        self.max_size = max_size
        self.max_total = max_total
        self.max_lookups = max_lookups
        self.drive = drive
        self.drive_after = drive_after

    def upsert(self, record: MemoryRecord) -> None:
        """Index the stored record's current version (a newer stored version is left as it is)."""
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT seq, version FROM memories WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            ).fetchone()
            if row is None or row["version"] > record.version:
                return  # deleted meanwhile, or a newer version is already stored and indexed
            drop_document(conn, record.project_id, record.id)
            _drop_postings(conn, record.project_id, row["seq"])  # postings no document names
            self._insert(conn, record, row["seq"])

    @staticmethod
    def _insert(conn: sqlite3.Connection, record: MemoryRecord, doc: int) -> None:
        keys = document_keys(record)
        if keys:
            pairs = json.dumps(list(keys.items()), ensure_ascii=False)
            conn.execute(
                "INSERT INTO index_terms (project_id, key, df) SELECT ?, value ->> 0, 1 FROM json_each(?) WHERE 1"
                " ON CONFLICT (project_id, key) DO UPDATE SET df = df + 1",
                (record.project_id, pairs),
            )
            conn.execute(
                "INSERT INTO postings (term, impact, doc) SELECT t.id, j.value ->> 1, ? FROM json_each(?) AS j"
                " CROSS JOIN index_terms t ON t.project_id = ? AND t.key = j.value ->> 0",  # json_each outer
                (doc, pairs, record.project_id),
            )
        conn.execute(
            "INSERT INTO index_docs (workspace_id, project_id, id, doc, version) VALUES (?,?,?,?,?)",
            (record.workspace_id, record.project_id, record.id, doc, record.version),
        )
        conn.execute(
            "INSERT INTO index_stats (project_id, docs) VALUES (?, 1)"
            " ON CONFLICT (project_id) DO UPDATE SET docs = docs + 1",
            (record.project_id,),
        )

    def remove(self, record: MemoryRecord) -> None:
        """Make the record unsearchable, unless the index holds a newer version of it."""
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT version FROM index_docs WHERE project_id = ? AND id = ?", (record.project_id, record.id)
            ).fetchone()
            if held is not None and held["version"] <= record.version:
                drop_document(conn, record.project_id, record.id)

    def rebuild(self) -> None:
        """Re-index every record (after a change of the index layout or the analysis), in one
        transaction."""
        with self.db.write() as conn:
            conn.execute("DROP TABLE IF EXISTS memory_fts")  # layouts 1-3: FTS5 and its document table
            conn.execute("DROP TABLE IF EXISTS index_rows")
            for table in ("postings", "index_terms", "index_docs", "index_stats"):
                conn.execute(f"DELETE FROM {table}")
            for row in conn.execute("SELECT seq, body FROM memories ORDER BY seq").fetchall():
                self._insert(conn, record_of(row), row["seq"])
            conn.execute(
                "INSERT INTO index_meta (name, value) VALUES ('analysis', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (text.ANALYSIS,),
            )
            conn.execute(f"PRAGMA user_version = {INDEX_VERSION}")

    def outdated(self) -> bool:
        """Whether the index was built with another layout or analysis (then ``rebuild``)."""
        conn = self.db.conn()
        if conn.execute("PRAGMA user_version").fetchone()[0] < INDEX_VERSION:
            return True
        row = conn.execute("SELECT value FROM index_meta WHERE name = 'analysis'").fetchone()
        return row is None or row[0] != text.ANALYSIS

    # -- search ---------------------------------------------------------------------------------

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        return self.vectors.similar(query)

    def search(self, query: IndexQuery) -> list[IndexHit]:
        if not query.terms:
            return []
        conn = self.db.conn()
        plan, docs = _plan(conn, query)
        if query.mode == "all" and not all(term.keys for term in plan):
            return []  # a term no memory of the project holds
        if not any(term.keys for term in plan):
            return []
        if not query.prefer_working:
            return self._top(conn, query, plan, docs, "", query.limit)
        hits = self._top(conn, query, plan, docs, " AND m.kind_fold = 'working'", query.limit)
        if len(hits) < query.limit:
            hits += self._top(conn, query, plan, docs, " AND m.kind_fold <> 'working'", query.limit - len(hits))
        return hits

    def _top(
        self, conn: sqlite3.Connection, query: IndexQuery, plan: list[_Term], docs: int, extra: str, limit: int
    ) -> list[IndexHit]:
        where, params = filter_sql(query.filter)
        terms = [term for term in plan if term.keys]
        every = query.mode == "all" and len(terms) > 1
        search = _Search(conn, terms, every, where + extra, (query.scope.workspace_id, query.scope.project_id, *params))
        if not every:
            search.lookups_left = self.max_lookups
        rarest = min(sum(term.keys.values()) for term in terms)
        if not every and len(search.groups) > 2:
            commonest = max(search.groups, key=search._group_df)
            if search._group_df(commonest) * COMMON_SHARE >= docs:
                search.common = commonest
        if not every and len(search.groups) > 1 and search.several_cost() <= self.drive:
            # Terms that seldom meet make a sum threshold fall only when their postings are read
            # deep. Knowing which documents hold several of them (lookups through the rarer terms'
            # postings, inside SQLite) leaves each of the others to its own group's threshold.
            several = search.holding_several_groups()
            search.several = set(several)
            search.take_best(several, limit)
        size = max(self.min_size, 2 * limit)
        keys = sum(len(term.keys) for term in terms)
        max_size = self.max_size
        if not every:  # recall's budget over all keys (each key at least min_size)
            max_size = max(self.min_size, min(self.max_size, self.max_total // keys))
            size = min(size, max_size)
        rounds = 0
        while True:
            search.read_to(size)
            if not every and size < max_size and search.threshold() > search.likely_kth(limit):
                # Unread documents could still beat what was read: judging now would look up
                # documents that deeper reads (cheaper than lookups) will rule out.
                size = min(4 * size, max_size)
                continue
            search.judge(limit)
            bound = search.threshold()
            if search.kth(limit) > bound or bound == -math.inf:
                return self._hits(conn, search, self._best(search, bound, limit))
            rounds += 1
            if every and rounds == self.drive_after and rarest <= self.drive:
                # The best postings of terms that seldom meet hardly make documents holding them
                # all. The rarest term is rare enough to go through its postings: the documents
                # holding every term, exactly, looked up inside SQLite.
                search.holding_every_term(limit)
                return self._hits(conn, search, self._best(search, -math.inf, limit))
            if size < max_size:
                size = min(4 * size, max_size)
                continue
            if every:
                # bounded reading found too few: every document holding all terms, whatever it costs
                search.holding_every_term(limit)
                return self._hits(conn, search, self._best(search, -math.inf, limit))
            if query.mode == "any" and len(search.scored) >= limit:
                # best effort (``any``): answer from the documents read, when enough pass
                return self._hits(conn, search, self._best(search, -math.inf, limit))
            # too few pass the filters among the best postings: the documents that pass, from the
            # records (exact; its cost is the project's size, in C, not its postings in Python)
            search.passing()
            return self._hits(conn, search, self._best(search, -math.inf, limit))

    @staticmethod
    def _best(search: _Search, bound: float, limit: int) -> list[tuple[int, Scored]]:
        best = [item for item in search.scored.items() if item[1][0] > bound]
        best.sort(key=lambda item: (item[1][0], item[1][1]), reverse=True)
        return best[:limit]

    @staticmethod
    def _hits(conn: sqlite3.Connection, search: _Search, best: Sequence[tuple[int, Scored]]) -> list[IndexHit]:
        if not best:
            return []
        bodies = dict(
            conn.execute(
                "SELECT m.seq, m.body FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value",
                (json.dumps([doc for doc, _ in best]),),
            ).fetchall()
        )
        return [
            IndexHit(MemoryRecord.model_validate_json(bodies[doc]), score / SCALE, matched=search.matched(doc))
            for doc, (score, _, _) in best
            if doc in bodies
        ]
