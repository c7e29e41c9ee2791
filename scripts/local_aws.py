"""The AWS backend on this machine: moto (DynamoDB) with the test suite's patches, a real
OpenSearch node and ``mnemo serve --backend aws`` on them (``make serve-aws``).

moto's own ``TransactWriteItems`` deep-copies every table it writes to, so each ``memory_add``
(a transaction: the memory and its dedup claim) costs what moto holds, and a slow one is retried
by the SDK beside the first, each copy held at once: started as a plain ``moto_server``, moto
grew to 15.8 GB after about 800 adds (docs/pitfalls.md). Here moto runs with the patches the
tests and the bench use (``tests.support.aws_stack.patch_moto``); everything is in memory and
gone when this command stops (Ctrl-C or SIGTERM stops all three).

    .venv/bin/python scripts/local_aws.py serve [--port 8787] [--moto-port 5000]
    .venv/bin/python scripts/local_aws.py moto [--port 5000]     # the patched moto alone
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def moto_command(port: int, *, patched: bool = True) -> list[str]:
    """The moto server on 127.0.0.1:``port``: with the suite's patches, or (``patched=False``, for
    the bench's comparison) as ``moto_server`` starts it."""
    if not patched:
        return [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)]
    return [sys.executable, str(Path(__file__).resolve()), "moto", "--port", str(port)]


def serve_env(dynamodb_url: str, opensearch_url: str) -> dict[str, str]:
    """``mnemo serve --backend aws``'s environment on these endpoints (README, "The AWS backend on
    your machine"); a variable already set wins."""
    return {
        "AWS_ACCESS_KEY_ID": "test",  # moto accepts any credentials; never real ones here
        "AWS_SECRET_ACCESS_KEY": "test",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": dynamodb_url,
        "MNEMO_OPENSEARCH_ENDPOINT": opensearch_url,
        "MNEMO_AWS_CREATE_TABLES": "true",
        **os.environ,
    }


def _moto(port: int) -> int:
    """The patched moto server in this process until SIGTERM or SIGINT."""
    import logging

    from moto.server import ThreadedMotoServer

    from tests.support.aws_stack import patch_moto

    patch_moto()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per call otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    server.start()
    print(f"moto (patched): http://127.0.0.1:{port}", flush=True)
    done.wait()
    server.stop()
    return 0


def _wait_listening(process: subprocess.Popen[bytes], port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"local_aws: moto exited ({process.returncode})")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"local_aws: moto did not listen on {port} within {seconds:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _serve(moto_port: int, serve_args: list[str], *, patched: bool) -> int:
    """moto, the OpenSearch node and ``mnemo serve --backend aws``; stops all three when the
    server ends or this process gets SIGTERM / SIGINT."""
    from tests.support.opensearch_node import OpenSearchNode, available, fetch

    ok, reason = available()
    if not ok:
        fetch()  # scripts/opensearch.sh fetch (Maven, Java 17), once
        ok, reason = available()
        if not ok:
            print(f"local_aws: OpenSearch cannot run here: {reason}", file=sys.stderr)
            return 2
    stopping = threading.Event()

    def on_signal(*_: object) -> None:
        stopping.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    moto = subprocess.Popen(moto_command(moto_port, patched=patched), cwd=ROOT)  # noqa: S603 - our own commands
    node = None
    server = None
    try:
        _wait_listening(moto, moto_port)
        node = OpenSearchNode().start()  # as an unprivileged user when root; dies with this process
        print(f"OpenSearch: {node.url}", flush=True)
        env = serve_env(f"http://127.0.0.1:{moto_port}", node.url)
        mnemo = Path(sys.executable).with_name("mnemo")
        server = subprocess.Popen([str(mnemo), "serve", "--backend", "aws", *serve_args], env=env)  # noqa: S603
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if server is not None:
            _stop(server)
        if node is not None:
            node.stop()
        _stop(moto)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="moto, OpenSearch and mnemo serve --backend aws")
    serve.add_argument("--moto-port", type=int, default=5000)
    serve.add_argument(
        "--unpatched-moto", action="store_true", help="moto as moto_server starts it (for bench/aws_serve.py)"
    )
    moto = sub.add_parser("moto", help="the patched moto server alone")
    moto.add_argument("-p", "--port", type=int, default=5000)
    args, rest = parser.parse_known_args(argv)
    if args.command == "moto":
        return _moto(args.port)
    return _serve(args.moto_port, rest, patched=not args.unpatched_moto)


if __name__ == "__main__":
    raise SystemExit(main())
