"""Writes that embed after their answer (``Service(embed_after_answer=True)``, what ``mnemo serve``
and ``mnemo mcp`` do with the default ``minilm``; docs/retrieval.md, "Embedding after the answer"),
on every backend: a write answers without calling the embedder, its memory is found by words at
once and by meaning once the process's thread has stored its vector (waited for with a deadline,
never a timing assertion), and a memory changed before its turn gets the vector of its current
content, never a stale one. The embedder is the static model behind a gate the test opens."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
from mnemo.embedding import cosine, default_embedder
from mnemo.models.records import MemoryRecord
from mnemo.models.tools import SimilarMemory
from mnemo.ports import Ports, Scope
from mnemo.service.context import CallContext

from tests.contract.conftest import Indexer, IndexerKeepsUp, Tenant, new_tenant
from tests.support.waiting import wait_until

ALLERGY = "Bob is allergic to peanuts"
ASKED = "who has nut allergies"  # shares no word with ALLERGY
MOVED = "The kitchen closes at 3pm"
#: the bound the docs state for a vector after its write, on an idle machine a fraction of it
DEADLINE_S = 30.0


AFTER = "mnemo-embed-after"  # the thread's name (mnemo.service.vectors.EmbedAfter)


class Gated:
    """The static model; in the thread that embeds after the answer, only once the gate is open.
    Records the thread of every call (queries embed in the caller's thread, never gated)."""

    model = "static-gated"
    dim = 256

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        if threading.current_thread().name == AFTER and not self.gate.wait(DEADLINE_S):
            raise TimeoutError("the gate stayed shut")
        return default_embedder().embed(texts)


@pytest.fixture
def gated() -> Gated:
    return Gated()


@pytest.fixture
def later(ports: Ports, indexer: Indexer, gated: Gated) -> Tenant:
    return new_tenant(IndexerKeepsUp(ports, indexer, embedder=gated, embed_after_answer=True))


def semantic(tenant: Tenant, query: str) -> list[str]:
    return [r.reference for r in tenant.call("recall", query=query, mode="semantic").results]


def vector_of(tenant: Tenant, memory_id: str) -> list[float] | None:
    record = tenant.svc.ports.store.get(Scope(tenant.workspace_id, tenant.project.id), memory_id)
    assert record is not None
    return None if record.embedding is None else list(record.embedding.vector)


def test_a_write_answers_before_its_vector_which_follows_from_the_processes_thread(later, gated):
    memory = later.call("memory_add", content=ALLERGY).memory  # the gate is shut: no vector yet

    assert set(gated.threads) <= {AFTER}  # the write answered without embedding in the caller's thread
    assert [r.reference for r in later.call("recall", query="peanuts", mode="lexical").results] == [memory.id]
    assert vector_of(later, memory.id) is None
    assert semantic(later, ASKED) == []

    gated.gate.set()
    found = wait_until(lambda: semantic(later, ASKED), DEADLINE_S, "meaning finds the memory")

    assert found == [memory.id]
    assert AFTER in gated.threads
    assert later.svc.embed_after is not None and later.svc.embed_after.drain(DEADLINE_S)


def test_a_memory_changed_before_its_turn_gets_the_vector_of_its_current_content(later, gated):
    memory = later.call("memory_add", content=ALLERGY).memory
    updated = later.call("memory_update", id=memory.id, content=MOVED).memory
    assert updated.version == 2

    gated.gate.set()
    assert later.svc.embed_after is not None and later.svc.embed_after.drain(DEADLINE_S)

    vector = vector_of(later, memory.id)
    assert vector is not None
    (expected,) = default_embedder().embed([MOVED])
    assert cosine(vector, expected) == pytest.approx(1.0, abs=1e-6)
    found = wait_until(lambda: semantic(later, "when does the kitchen close"), DEADLINE_S, "the new content's vector")
    assert found[0] == memory.id
    assert ALLERGY not in [r.content for r in later.call("recall", query=ASKED, mode="semantic").results]


def test_a_failing_embedder_after_the_answer_leaves_the_memory_marked_for_cleanup(later, gated, ports):
    def down(texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("down")

    gated.embed = down  # type: ignore[method-assign]
    memory = later.call("memory_add", content=ALLERGY).memory

    assert later.svc.embed_after is not None and later.svc.embed_after.drain(DEADLINE_S)
    marks = [m.memory_id for m in ports.maintenance.repair_marks(None, 100).items]
    assert memory.id in marks
    assert vector_of(later, memory.id) is None


def test_handed_over_a_vector_is_stored_by_the_thread_that_serves_the_calls(later, gated):
    """``mnemo mcp`` hands the vectors over to its serving thread (``api/mcp/stdio.run_stdio``): the
    daemon makes each one, leaves it and wakes that thread, which stores it through its own
    connection between messages."""
    embed_after = later.svc.embed_after
    assert embed_after is not None
    woken = threading.Event()
    embed_after.hand_over(woken.set)
    try:
        memory = later.call("memory_add", content=ALLERGY).memory
        gated.gate.set()
        assert woken.wait(DEADLINE_S), "the daemon made the vector and woke the serving thread"
        assert vector_of(later, memory.id) is None  # left for the serving thread: the daemon stored nothing
        assert embed_after.pending() == 1  # made, not stored yet

        assert embed_after.write_ready() == 1  # this thread stores it
        assert vector_of(later, memory.id) is not None
        assert embed_after.pending() == 0
        assert wait_until(lambda: semantic(later, ASKED), DEADLINE_S, "meaning finds the memory") == [memory.id]
    finally:
        embed_after.hand_back()


def test_vectors_left_for_the_serving_thread_are_stored_when_it_hands_back_or_the_process_drains(later, gated):
    embed_after = later.svc.embed_after
    assert embed_after is not None
    gated.gate.set()
    for content, finish in ((ALLERGY, embed_after.hand_back), (MOVED, lambda: embed_after.drain(DEADLINE_S))):
        woken = threading.Event()
        embed_after.hand_over(woken.set)
        memory = later.call("memory_add", content=content).memory
        assert woken.wait(DEADLINE_S)
        assert vector_of(later, memory.id) is None
        finish()  # the serving loop ends (hand_back), or the process is about to (drain)
        assert vector_of(later, memory.id) is not None
        embed_after.hand_back()
    assert embed_after.pending() == 0


class Recording:
    """An ``EmbedAfter`` stand-in that only notes when a record was queued."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def submit(self, record: MemoryRecord) -> None:
        self.events.append(f"queued {record.id}")


def test_a_memory_is_queued_for_its_vector_once_its_similar_memories_are_worked_out(later, monkeypatch):
    from mnemo.service import memories, similar

    events: list[str] = []
    near = similar.near

    def noting(ctx: CallContext, record: MemoryRecord) -> list[SimilarMemory]:
        events.append(f"similar {record.id}")
        return near(ctx, record)

    monkeypatch.setattr(memories.similar, "near", noting)
    monkeypatch.setattr(later.svc, "embed_after", Recording(events))
    memory = later.call("memory_add", content=ALLERGY).memory

    assert events == [f"similar {memory.id}", f"queued {memory.id}"]


def test_a_memory_whose_similar_memories_fail_is_queued_all_the_same(later, monkeypatch):
    from mnemo.service import memories

    events: list[str] = []

    def failing(ctx: CallContext, record: MemoryRecord) -> list[SimilarMemory]:
        raise RuntimeError("similar failed")

    monkeypatch.setattr(memories.similar, "near", failing)
    monkeypatch.setattr(later.svc, "embed_after", Recording(events))
    with pytest.raises(RuntimeError):
        later.call("memory_add", content=ALLERGY)

    assert len(events) == 1 and events[0].startswith("queued mem_")
