"""``service.vectors.embed_query`` keeps the vectors of recent queries, per embedder object: a
repeated query costs no second embedding, another embedder (even under the same model name) is
always asked itself, and a failure is never kept; a costly embedder makes the vector on the query
thread (``embed_query_aside``), with the same cache and the same errors."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from mnemo import machine
from mnemo.errors import EmbedderUnavailable
from mnemo.service import vectors


class Counting:
    model = "counting"
    dim = 2

    def __init__(self, first: float = 1.0) -> None:
        self.first = first
        self.texts: list[str] = []
        self.down = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.down:
            raise EmbedderUnavailable("down")
        self.texts += texts
        return [[self.first, float(len(t))] for t in texts]


class Asymmetric(Counting):
    """Queries embedded apart from documents (e5's prefixes)."""

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += [f"query: {t}" for t in texts]
        return [[-self.first, float(len(t))] for t in texts]


def test_a_repeated_query_is_embedded_once_and_answers_the_same_vector():
    embedder = Counting()
    first = vectors.embed_query(embedder, "deploy freeze")
    first.append(99.0)  # the caller's list is its own: the kept vector does not change
    assert vectors.embed_query(embedder, "deploy freeze") == [1.0, 13.0]
    assert vectors.embed_query(embedder, "deploy  freeze") == [1.0, 14.0]  # another text
    assert embedder.texts == ["deploy freeze", "deploy  freeze"]


def test_each_embedder_object_is_asked_itself_even_under_the_same_model_name():
    one, other = Counting(1.0), Counting(2.0)
    assert vectors.embed_query(one, "pricing") == [1.0, 7.0]
    assert vectors.embed_query(other, "pricing") == [2.0, 7.0]
    assert (one.texts, other.texts) == (["pricing"], ["pricing"])


def test_queries_go_through_embed_queries_when_the_embedder_has_it():
    embedder = Asymmetric()
    assert vectors.embed_query(embedder, "churn") == [-1.0, 5.0]
    assert vectors.embed_query(embedder, "churn") == [-1.0, 5.0]
    assert embedder.texts == ["query: churn"]


def test_a_failure_is_not_kept_and_the_oldest_queries_leave_first(monkeypatch):
    monkeypatch.setattr(vectors, "QUERY_CACHE_SIZE", 2)
    embedder = Counting()
    embedder.down = True
    with pytest.raises(EmbedderUnavailable):
        vectors.embed_query(embedder, "a")
    embedder.down = False
    for text in ("a", "b", "a", "c", "a", "b"):  # "b" left when "c" came: "a" was used since
        vectors.embed_query(embedder, text)
    assert embedder.texts == ["a", "b", "c", "b"]


class Aside(Counting):
    """An embedder whose queries cost enough to be made on the query thread."""

    embed_queries_aside = True

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import threading

        self.threads.append(threading.current_thread().name)
        return super().embed(texts)


@pytest.fixture
def core_free(monkeypatch):
    """The machine has a core to spare (its load is not this test's to choose)."""
    monkeypatch.setattr(machine, "spare_core", lambda: True)


def test_a_query_embedded_aside_is_made_on_the_query_thread_and_kept(core_free):
    import threading

    embedder = Aside()
    pending = vectors.embed_query_aside(embedder, "deploy freeze")
    assert pending.result() == [1.0, 13.0]
    assert embedder.threads[0] != threading.current_thread().name
    assert embedder.threads[0].startswith("mnemo-query-vector")
    again = vectors.embed_query_aside(embedder, "deploy freeze")  # kept: not asked again
    assert again.result() == [1.0, 13.0]
    assert embedder.texts == ["deploy freeze"]


def test_an_embedder_that_does_not_ask_is_asked_in_the_callers_thread_when_the_vector_is_wanted(core_free):
    import threading

    embedder = Aside()
    embedder.embed_queries_aside = False
    pending = vectors.embed_query_aside(embedder, "pricing")
    assert embedder.texts == []  # nothing made before the caller asks for it
    assert pending.result() == [1.0, 7.0]
    assert embedder.threads == [threading.current_thread().name]


def test_a_failure_aside_is_raised_when_the_vector_is_wanted_and_not_kept(core_free):
    embedder = Aside()
    embedder.down = True
    pending = vectors.embed_query_aside(embedder, "churn")
    with pytest.raises(EmbedderUnavailable):
        pending.result()
    embedder.down = False
    assert vectors.embed_query_aside(embedder, "churn").result() == [1.0, 5.0]
    assert embedder.texts == ["churn"]


def test_with_no_core_to_spare_the_vector_is_made_in_the_callers_thread_when_wanted(monkeypatch):
    import threading

    monkeypatch.setattr(machine, "spare_core", lambda: False)
    embedder = Aside()
    pending = vectors.embed_query_aside(embedder, "pricing")
    assert embedder.texts == []  # nothing started: the caller makes it when it wants it
    assert pending.result() == [1.0, 7.0]
    assert embedder.threads == [threading.current_thread().name]


@pytest.mark.parametrize(
    ("cores", "load", "spare"),
    [
        (2, 0.4, True),
        (2, 1.9, True),
        (2, 2.0, False),  # both cores taken on average over the last minute
        (2, 3.7, False),
        (8, 6.5, True),
        (1, 0.0, False),  # one core: a second thread has nowhere to run
        (1.5, 0.0, False),  # a quota of one and a half: not two
    ],
)
def test_a_core_is_spare_while_the_load_average_is_below_the_cores(monkeypatch, cores, load, spare):
    monkeypatch.setattr(machine, "usable_cores", lambda: cores)
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (load, load, load))
    assert machine.spare_core() is spare


def test_the_usable_cores_are_the_pinned_ones_or_fewer_under_a_cgroup_quota(monkeypatch, tmp_path):
    monkeypatch.setattr(machine.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(machine, "CGROUP", tmp_path)
    machine.usable_cores.cache_clear()
    try:
        assert machine.cpu_quota(tmp_path) is None  # no cgroup files: no quota
        assert machine.usable_cores() == 4
        (tmp_path / "cpu.max").write_text("max 100000\n")  # cgroup v2, no quota
        assert machine.cpu_quota(tmp_path) is None
        (tmp_path / "cpu.max").write_text("150000 100000\n")  # docker run --cpus 1.5
        assert machine.cpu_quota(tmp_path) == 1.5
        (tmp_path / "cpu.max").unlink()
        (tmp_path / "cpu").mkdir()
        (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")  # cgroup v1, no quota
        (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
        assert machine.cpu_quota(tmp_path) is None
        (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")  # one CPU
        assert machine.cpu_quota(tmp_path) == 1.0
        machine.usable_cores.cache_clear()
        assert machine.usable_cores() == 1.0
    finally:
        machine.usable_cores.cache_clear()


def test_no_load_average_means_no_second_thread(monkeypatch):
    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(machine.os, "getloadavg", unavailable)
    assert machine.spare_core() is False


def _recall_threads(monkeypatch, *, aside: bool) -> list[str]:
    """The threads an asking embedder made recall's query vector on, in a service that may (or may
    not) make it aside, a core being free."""
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.service import tenancy
    from mnemo.service.identity import ADMIN
    from mnemo.service.pipeline import Service

    monkeypatch.setattr(machine, "spare_core", lambda: True)
    embedder = Aside()
    svc = Service(SqliteBackend(":memory:"), embedder=embedder, query_vector_aside=aside)
    workspace, _ = tenancy.create_workspace(svc.ports, "w")
    caller = svc.authenticate(f"Bearer {tenancy.create_key(svc.ports, workspace.id, label='a', scopes=[ADMIN]).plain}")
    svc.invoke("memory_add", caller, {"content": "deploys on Tuesdays"})
    embedder.threads.clear()
    svc.invoke("recall", caller, {"query": "when do we deploy"})
    svc.ports.close()
    return embedder.threads


def test_recall_makes_the_vector_aside_only_in_a_service_that_may(monkeypatch):
    import threading

    assert _recall_threads(monkeypatch, aside=False) == [threading.current_thread().name]
    (made_on,) = _recall_threads(monkeypatch, aside=True)
    assert made_on.startswith("mnemo-query-vector")


def test_a_local_process_may_make_query_vectors_aside_and_a_lambda_function_not(monkeypatch, tmp_path):
    from mnemo import runtime
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.config import Settings

    cfg = Settings(embedder="static")
    ports = SqliteBackend(tmp_path / "mnemo.db")
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    assert runtime.build_service(ports, cfg).query_vector_aside is True
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "mnemo-search")
    assert runtime.build_service(ports, cfg).query_vector_aside is False
    ports.close()
