"""The AWS backend's test stack: moto in server mode (boto3 really speaks HTTP to it) beside the
session's real OpenSearch node (tests/conftest.py); tables come from template.yaml's key schemas."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.processes import stop

#: use an already running node instead of starting one (e.g. scripts/opensearch.sh)
URL_ENV = "MNEMO_TEST_OPENSEARCH_URL"
#: the vector layout of the session's index (``hnsw``, the default, or ``exact``): the contract
#: suite runs on either (docs/scale.md, "Changing the index's mapping")
VECTORS_ENV = "MNEMO_TEST_OPENSEARCH_VECTORS"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def patch_moto() -> None:
    """Where moto's cost grows with what it holds or returns while DynamoDB's does not, the suite's
    moto does the same work another way, each held to moto's own answers by a unit test."""
    from tests.support import moto_queries, moto_responses, moto_routing, moto_transactions

    moto_transactions.install()  # transactions without moto's copy of the whole table
    moto_queries.install()  # queries that read their partition, not the whole table
    moto_responses.install()  # attribute values written directly, not through the shape walk
    moto_routing.install()  # moto's folders listed once, not on every request


#: the repository, the moto process's working directory (it imports tests.support)
ROOT = Path(__file__).resolve().parents[2]
#: how long moto's process may take to import moto and bind its port on a loaded machine
MOTO_START_S = 60.0


@contextmanager
def moto_server() -> Iterator[str]:
    """moto in server mode with the suite's patches, in a process of its own: in the test process
    its request handling shared one interpreter lock with the tests and their clients, so that
    session kept about one core busy at most while the other idled once the other part had ended
    (vmstat 10 over a fresh clone's CI, 2026-12-02). The process dies with this one."""
    port = free_port()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.aws_stack", str(port), str(os.getpid())],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _wait_listening(process, port, output)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(process, signal.SIGTERM, timeout=10)


def _wait_listening(process: subprocess.Popen[str], port: int, output: Any) -> None:
    deadline = time.monotonic() + MOTO_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output.seek(0)
            raise RuntimeError(f"moto's server exited ({process.returncode}): {output.read()[-4000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    stop(process, signal.SIGTERM, timeout=5)
    raise RuntimeError(f"moto's server did not listen on {port} within {MOTO_START_S:.0f} s")


def _serve(port: int, parent: int) -> None:
    """The moto process: the patched server until SIGTERM, which the kernel also sends when the
    test process ends (``PR_SET_PDEATHSIG``; if it has already ended, the server does not start)."""
    import ctypes
    import logging

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        return

    from moto.server import ThreadedMotoServer

    patch_moto()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per call otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    server.start()
    done.wait()
    server.stop()


def aws_settings(dynamodb_url: str, opensearch_url: str, **overrides: Any) -> Any:
    from mnemo.config import Settings

    run = uuid.uuid4().hex[:8]
    values: dict[str, Any] = {
        "backend": "aws",
        "aws_region": "us-east-1",
        "dynamodb_endpoint_url": dynamodb_url,
        "memories_table": f"mnemo-memories-{run}",
        "tenants_table": f"mnemo-tenants-{run}",
        "rate_table": f"mnemo-rate-{run}",
        "idempotency_table": f"mnemo-idempotency-{run}",
        "opensearch_endpoint": opensearch_url,
        "opensearch_index": f"mnemo-test-{run}",
        "opensearch_timeout_s": 10.0,
        # a short interval keeps the suite quick; the index's own writes (the indexer's, the
        # cleanup job's) wait for it, so what a test drained is searchable when it looks
        "opensearch_refresh_interval": "10ms",
        "opensearch_refresh": "wait_for",
        "opensearch_vectors": os.environ.get(VECTORS_ENV, "hnsw"),
        **overrides,
    }
    return Settings(**values)


class RequestCounter:
    """Counts DynamoDB calls (botocore ``before-call``) and OpenSearch HTTP requests (a wrapper
    around the client's transport) made through one backend."""

    def __init__(self, backend: Any) -> None:
        self.dynamodb: Counter[str] = Counter()
        self.opensearch: Counter[str] = Counter()
        backend.dynamodb.meta.events.register("before-call.dynamodb", self._on_dynamodb)
        transport = backend.index.client.transport
        original = transport.perform_request

        def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            parts = url.split("?")[0].strip("/").split("/")
            self.opensearch[f"{method} {next((p for p in parts if p.startswith('_')), parts[-1])}"] += 1
            return original(method, url, *args, **kwargs)

        transport.perform_request = perform_request

    def _on_dynamodb(self, model: Any, **_: Any) -> None:
        self.dynamodb[model.name] += 1

    def reset(self) -> None:
        self.dynamodb.clear()
        self.opensearch.clear()


class SerialisedDynamoDB:
    """moto does not apply conditional writes atomically across threads (docs/pitfalls.md); real DynamoDB
    is atomic per item. This takes one lock in botocore's ``before-call`` and releases it in
    ``after-call`` / ``after-call-error``, so moto sees one call at a time, like one item would."""

    def __init__(self, client: Any) -> None:
        self.lock = threading.Lock()
        events = client.meta.events
        events.register("before-call.dynamodb", self._acquire)
        events.register("after-call.dynamodb", self._release)
        events.register("after-call-error.dynamodb", self._release)

    def _acquire(self, **_: Any) -> None:
        self.lock.acquire()

    def _release(self, **_: Any) -> None:
        if self.lock.locked():
            self.lock.release()


def serve_env(cfg: Any, name: str) -> dict[str, str]:
    """The environment of a ``mnemo serve --backend aws`` on the stack of ``cfg`` (its DynamoDB
    and OpenSearch endpoints) with tables and an index of its own, created on first start."""
    run = f"{name}-{uuid.uuid4().hex[:8]}"
    return {
        "MNEMO_BACKEND": "aws",
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": cfg.aws_region,
        "MNEMO_DYNAMODB_ENDPOINT_URL": cfg.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": cfg.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": f"{cfg.opensearch_index}-{run}",
        "MNEMO_OPENSEARCH_REFRESH_INTERVAL": cfg.opensearch_refresh_interval,
        "MNEMO_MEMORIES_TABLE": f"{run}-memories",
        "MNEMO_TENANTS_TABLE": f"{run}-tenants",
        "MNEMO_RATE_TABLE": f"{run}-rate",
        "MNEMO_IDEMPOTENCY_TABLE": f"{run}-idempotency",
    }


class SerialMotoServer:
    """A moto server that answers one request at a time (werkzeug without threads, HTTP/1.0), for
    tests whose DynamoDB callers are other processes: a botocore hook (SerialisedDynamoDB) can
    only serialise the calls of this process, so here moto itself takes them one by one, as
    real DynamoDB applies conditional writes atomically per item. It shares moto's in-memory
    state with every other moto server of this process."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        patch_moto()
        self.port = free_port()
        self._server = make_server("127.0.0.1", self.port, DomainDispatcherApplication(create_backend_app))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SerialMotoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join()


@contextmanager
def own_stack(cfg: Any, **overrides: Any) -> Iterator[Any]:
    """Settings of tables and an index of their own on the endpoints of ``cfg`` (the session's
    moto server and OpenSearch node), for tests that write so much that the session's shared
    tables would carry it into other suites (the cleanup job walks every tenant); dropped after.
    ``overrides``: other settings of those (``aws_settings``)."""
    from mnemo.backends.aws import Tables
    from mnemo.backends.aws.clients import dynamodb_client, opensearch_client
    from mnemo.local.tables import create_tables

    own = aws_settings(cfg.dynamodb_endpoint_url, cfg.opensearch_endpoint, **overrides)
    dynamodb = dynamodb_client(own)
    create_tables(dynamodb, Tables.from_settings(own).by_logical_id())
    try:
        yield own
    finally:
        for table in Tables.from_settings(own).by_logical_id().values():
            dynamodb.delete_table(TableName=table)
        client = opensearch_client(own)
        client.indices.delete(index=f"{own.opensearch_index}-*", ignore_unavailable=True)
        client.close()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
