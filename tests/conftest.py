"""Shared fixtures. Environment for Powertools is set before any handler module is imported."""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MnemoTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mnemo")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mnemo import runtime
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.embedding import default_embedder
from mnemo.service import tenancy
from mnemo.service.identity import Caller
from mnemo.service.pipeline import Service

from tests.support import fuzz
from tests.support.missing import unavailable
from tests.support.opensearch_node import OpenSearchError, OpenSearchNode, available, fetch

#: the fuzz budgets' profile (HYPOTHESIS_PROFILE: dev, ci — the default — or deep; tests/support/fuzz.py)
fuzz.load()

#: the key that every file in events/ carries
EVENTS_KEY = "test-events-key-0123456789"

# -- markers: each test module declares its own (`pytestmark`); this file only checks and adds ``slow``
# -- to the property searches whose budget makes them slow (pyproject.toml registers the markers)

TESTS = Path(__file__).resolve().parent
#: suites that start real servers, build artifacts or run long property searches: every module in them
#: declares ``pytest.mark.slow`` (the check below fails the collection of one that does not)
SLOW_SUITES = frozenset({"e2e", "hardening", "built", "package", "integration"})
#: the fixtures that start a JVM (the OpenSearch node, Keycloak) or stand on one, and tests/built's
#: artifacts (its tests share one ``sam build`` per architecture, which two sessions would each make)
ENGINE_FIXTURES = frozenset({"opensearch_node", "opensearch_url", "aws_stack", "keycloak_node", "builds"})
#: ``--part``: the session's share of the suites (scripts/suites.py runs the two side by side)
PARTS = ("engines", "rest")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--part",
        choices=PARTS,
        default=None,
        help="run only the tests that need a real engine (the OpenSearch node or Keycloak: marked aws or "
        "keycloak, or using their fixtures) or only the rest; `make test` runs both parts side by side",
    )


def needs_an_engine(item: pytest.Item) -> bool:
    """True for a test that needs the OpenSearch node or Keycloak (its part under ``--part``), or
    tests/built's artifacts."""
    if item.get_closest_marker("aws") or item.get_closest_marker("keycloak"):
        return True
    return not ENGINE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def undeclared_slow(items: list[pytest.Item]) -> list[str]:
    """The modules of a slow suite whose ``pytestmark`` lacks ``pytest.mark.slow``."""
    missing = set()
    for item in items:
        module = item.getparent(pytest.Module)
        try:
            where = item.path.relative_to(TESTS)
        except ValueError:
            continue
        if where.parts[0] in SLOW_SUITES and module is not None and not module.get_closest_marker("slow"):
            missing.add(f"tests/{where.as_posix()}")
    return sorted(missing)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check the modules' markers, mark ``fuzz`` tests ``slow`` unless the budgets are ``dev``'s
    (``make check`` runs them then), and keep one part under ``--part``."""
    if missing := undeclared_slow(items):
        raise pytest.UsageError(
            "every test module under tests/{" + ",".join(sorted(SLOW_SUITES)) + "} declares the slow marker "
            "(`make check` leaves these suites out by it); add `pytestmark = [pytest.mark.slow]` (beside its "
            "other markers: aws, keycloak, node, browser) to: " + ", ".join(missing)
        )
    if fuzz.profile() != "dev":
        for item in items:
            if item.get_closest_marker("fuzz"):
                item.add_marker(pytest.mark.slow)
    part = config.getoption("part")
    if part is not None:
        kept, dropped = [], []
        for item in items:
            (kept if needs_an_engine(item) == (part == "engines") else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def sqlite_backend(tmp_path: Path) -> Iterator[SqliteBackend]:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    yield backend
    backend.close()


@pytest.fixture
def wired_runtime(tmp_path: Path) -> Iterator[Service]:
    """The process-wide service the handlers use, on a fresh SQLite file, with the events' key."""
    cfg = Settings(backend="sqlite", data_dir=tmp_path / "data")
    backend = SqliteBackend(cfg.sqlite_path)
    tenancy.bootstrap(backend, plain_key=EVENTS_KEY)
    svc = Service(backend, embedder=default_embedder())
    runtime.use(svc, cfg)
    yield svc
    runtime.use(None)
    backend.close()


def caller_for(svc: Service, plain_key: str) -> Caller:
    return svc.authenticate(f"Bearer {plain_key}")


# -- the engines, started as soon as the session knows it needs them ---------------------------

#: the engines a collected test needs, starting in the background since collection ended; the
#: fixture that owns each node claims it (waiting for the start) or starts one itself
_EARLY: dict[str, Future[Any]] = {}
_STARTER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="engine-start")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the OpenSearch node and the Keycloak the collected tests will use (already fetched, as
    ``make engines`` leaves them) without waiting: a JVM's start takes 10 s (OpenSearch) to a minute
    (Keycloak) of a loaded 2-core machine, and the tests that run before the first one needing it
    overlap that start instead of waiting behind it. Nothing starts when nothing needs it."""
    from tests.support import keycloak
    from tests.support import opensearch_node as opensearch
    from tests.support.aws_stack import URL_ENV

    if session.config.option.collectonly:
        return
    needed = set().union(*(getattr(item, "fixturenames", ()) for item in session.items))
    starts = {
        "opensearch": needed & {"opensearch_url", "opensearch_node"}
        and not os.environ.get(URL_ENV)
        and opensearch.available()[0]
        and opensearch.fetched_home() is not None,
        "keycloak": "keycloak_node" in needed
        and not os.environ.get("MNEMO_TEST_KEYCLOAK_URL")
        and keycloak.available()[0]
        and keycloak.fetched_home() is not None,
    }
    if starts["opensearch"]:
        _EARLY["opensearch"] = _STARTER.submit(OpenSearchNode().start)
    if starts["keycloak"]:
        _EARLY["keycloak"] = _STARTER.submit(keycloak.KeycloakNode().start)


def _claim(engine: str) -> Any:
    """The node started for the session (its start-up error raised here), or None."""
    started = _EARLY.pop(engine, None)
    return None if started is None else started.result()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop what was started for a test that never ran (deselected on the way, or its module failed)."""
    for engine in list(_EARLY):
        with contextlib.suppress(Exception):
            _claim(engine).stop()
    _STARTER.shutdown(wait=False)


# -- a real OpenSearch node and the AWS backend's stack (moto server), once per session -------


@pytest.fixture(scope="session")
def opensearch_node() -> Iterator[OpenSearchNode]:
    """One real OpenSearch 2.19 node on 127.0.0.1 for the whole session (stopped and deleted at the end).

    Tests that pause()/freeze() it must resume()/thaw() it before they return.
    """
    ok, reason = available()
    if not ok:
        unavailable("MNEMO_REQUIRE_OPENSEARCH", "OpenSearch", reason)
    try:
        fetch()  # a download failure (offline, no Maven Central) is "unavailable", not a test failure
    except OpenSearchError as exc:
        unavailable("MNEMO_REQUIRE_OPENSEARCH", "OpenSearch", str(exc))
    # a start-up failure is a real error: it carries the log tail
    node = _claim("opensearch") or OpenSearchNode().start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def keycloak_node() -> Iterator[Any]:
    """One real Keycloak 26 for the whole session, its realm from tests/fixtures/keycloak (or an already
    running one: ``MNEMO_TEST_KEYCLOAK_URL``, its tokens' audience ``http://mnemo.test``). Skipped
    loudly where it cannot run, an error with ``MNEMO_REQUIRE_KEYCLOAK=1``."""
    from tests.support import keycloak

    if os.environ.get("MNEMO_TEST_KEYCLOAK_URL"):
        yield keycloak.KeycloakNode.attach(os.environ["MNEMO_TEST_KEYCLOAK_URL"])
        return
    ok, reason = keycloak.available()
    if not ok:
        unavailable("MNEMO_REQUIRE_KEYCLOAK", "Keycloak", reason)
    try:
        keycloak.fetch()
    except keycloak.KeycloakError as exc:
        unavailable("MNEMO_REQUIRE_KEYCLOAK", "Keycloak", str(exc))
    # minutes on a loaded machine; a failure carries the log tail
    node = _claim("keycloak") or keycloak.KeycloakNode().start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def opensearch_url(request: pytest.FixtureRequest) -> str:
    """The session node's URL, or an already running node's (``MNEMO_TEST_OPENSEARCH_URL``)."""
    from tests.support.aws_stack import URL_ENV

    return os.environ.get(URL_ENV) or str(request.getfixturevalue("opensearch_node").url)


@pytest.fixture(scope="session")
def aws_stack(opensearch_url: str) -> Iterator[Settings]:
    """Settings of a fresh AWS stack: tables created from template.yaml, the index on first write."""
    from mnemo.backends.aws import Tables
    from mnemo.backends.aws.clients import dynamodb_client
    from mnemo.local.tables import create_tables

    from tests.support.aws_stack import aws_settings, moto_server

    with moto_server() as dynamodb_url:
        cfg = aws_settings(dynamodb_url, opensearch_url)
        create_tables(dynamodb_client(cfg), Tables.from_settings(cfg).by_logical_id())
        yield cfg
        _drop_index(cfg)


def _drop_index(cfg: Settings) -> None:
    from mnemo.backends.aws.clients import opensearch_client

    client = opensearch_client(cfg)
    client.indices.delete(index=f"{cfg.opensearch_index}-*", ignore_unavailable=True)
    client.close()


@pytest.fixture(scope="session")
def aws_clients(aws_stack: Settings) -> Iterator[tuple[Any, Any]]:
    """One DynamoDB and one OpenSearch client for the session (building them costs ~0.2 s)."""
    from mnemo.backends.aws.clients import dynamodb_client, opensearch_client

    opensearch = opensearch_client(aws_stack)
    yield dynamodb_client(aws_stack), opensearch
    opensearch.close()


@pytest.fixture
def aws_backend(aws_stack: Settings, aws_clients: tuple[Any, Any]) -> Any:
    """Every port on the shared stack; tests that hook a client build their own backend instead."""
    from mnemo.backends.aws import AwsBackend, Tables
    from mnemo.backends.aws.index import OpenSearchIndex

    dynamodb, opensearch = aws_clients
    index = OpenSearchIndex(
        opensearch,
        aws_stack.opensearch_index,
        refresh=aws_stack.opensearch_refresh,
        refresh_interval=aws_stack.opensearch_refresh_interval,
        vectors=aws_stack.opensearch_vectors,
    )
    return AwsBackend(dynamodb, index, Tables.from_settings(aws_stack))


@pytest.fixture
def own_backend(aws_stack: Settings) -> Iterator[Any]:
    """A backend with its own clients, so a test may hook them without touching the others."""
    from mnemo.backends.aws import AwsBackend

    backend = AwsBackend.from_settings(aws_stack)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def stream_drain(aws_stack: Settings) -> Any:
    """The session table's stream, drained through the indexer on demand (tests/support/stream.py)."""
    from tests.support.stream import StreamDrain

    return StreamDrain(aws_stack)


# -- the package as users build it, once per session -------------------------------------------


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The ``mnemo`` wheel built from a clone's copy of the files (tests/support/wheel.py): installed
    by tests/package, unpacked by tests/e2e/test_console_wheel.py."""
    from tests.support.wheel import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))
