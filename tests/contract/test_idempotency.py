"""The idempotency port's promise while a first call is still running, on every backend: a second
call with its key is a conflict at once, other writes go on meanwhile, and a claim whose call died
(its time ran out) is taken over by the next call.

The first call is held inside its computation — the embedding of the memory, the slow part of an
add — by an embedder that waits for the test's word, so "while it runs" lasts exactly as long as
the test needs, with deadlines instead of sleeps."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest
from mnemo.embedding import default_embedder
from mnemo.errors import Conflict
from mnemo.ports import Ports
from mnemo.service.pipeline import Service

from tests.contract.conftest import Tenant, new_tenant

#: how long the test waits for anything it waits for (a loaded 2-core CI box is slow, never this slow)
DEADLINE_S = 30.0
#: a text holding this is held in the embedder (the first time only) until the test releases it
HOLD = "held-in-embedding"


class HeldEmbedder:
    """The default embedder, except that the first text holding :data:`HOLD` waits in ``embed``
    until :attr:`release` is set; :attr:`entered` says that it has begun to."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.model, self.dim = self.inner.model, self.inner.dim
        self.entered = threading.Event()
        self.release = threading.Event()
        self._held = False
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            hold = not self._held and any(HOLD in text for text in texts)
            self._held = self._held or hold
        if hold:
            self.entered.set()
            if not self.release.wait(DEADLINE_S):
                raise TimeoutError("the test never released the held call")
        return self.inner.embed(texts)


@pytest.fixture
def held() -> Iterator[HeldEmbedder]:
    embedder = HeldEmbedder()
    yield embedder
    embedder.release.set()  # whatever the test's outcome, the held call ends


@pytest.fixture
def tenant_held(ports: Ports, held: HeldEmbedder) -> Tenant:
    return new_tenant(Service(ports, embedder=held))


def test_a_second_call_with_a_key_in_progress_is_a_conflict_and_other_writes_go_on(tenant_held, held):
    content = f"{HOLD}: rotate the signing keys on monday"
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(tenant_held.call, "memory_add", content=content, idempotency_key="k-held")
        assert held.entered.wait(DEADLINE_S), "the first call never reached its computation"

        # while the first call computes: the same key is a conflict at once (not a wait) ...
        second = pool.submit(tenant_held.call, "memory_add", content=content, idempotency_key="k-held")
        with pytest.raises(Conflict):
            second.result(timeout=DEADLINE_S)
        # ... and a write without it completes (the first call keeps no writer waiting)
        other = pool.submit(tenant_held.call, "memory_add", content="an unrelated note").result(timeout=DEADLINE_S)
        assert not first.done()

        held.release.set()
        added = first.result(timeout=DEADLINE_S)

    replayed = tenant_held.call("memory_add", content=content, idempotency_key="k-held")
    assert replayed == added
    assert tenant_held.call("memory_get", id=added.memory.id).memory.content == content
    assert tenant_held.call("memory_get", id=other.memory.id).memory.content == "an unrelated note"


def test_a_claim_whose_time_ran_out_is_taken_over_by_the_next_call(ports, tenant_held, held, monkeypatch):
    monkeypatch.setattr(ports.idempotency, "in_progress_ms", 1_000)
    content = f"{HOLD}: the nightly export moved to 02:00"
    with ThreadPoolExecutor(max_workers=1) as pool:
        stuck = pool.submit(tenant_held.call, "memory_add", content=content, idempotency_key="k-stuck")
        assert held.entered.wait(DEADLINE_S), "the first call never reached its computation"

        # the first call looks dead (it never finishes); once its claim runs out, a retry runs
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                retried = tenant_held.call("memory_add", content=content, idempotency_key="k-stuck")
                break
            except Conflict:
                assert time.monotonic() < deadline, "the expired claim was never taken over"
                held.release.wait(0.05)  # not set: a pause between retries, as a client's back-off
        assert not stuck.done()

        held.release.set()
        late = stuck.result(timeout=DEADLINE_S)

    # both calls ran (the price of a claim taken over); the late one found the retry's memory
    assert late.memory.id == retried.memory.id and late.deduplicated
    again = tenant_held.call("memory_add", content=content, idempotency_key="k-stuck")
    assert again.memory.id == retried.memory.id
