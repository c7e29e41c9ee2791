"""The start of ``mnemo serve``, in the order that loses nothing.

1. :func:`plan` checks everything that needs no side effect: the settings, the port,
   ``MNEMO_BOOTSTRAP_KEY``'s length, the data folder's kind;
2. ``mnemo.local.server.serve`` binds the socket (a port in use fails here, before the store is
   touched: :func:`bind_error` says so), then calls back, before it starts the handler instances;
3. :func:`open_store` creates the data folder if needed and opens the backend (so a store that
   cannot be opened is one line here, not a failure in every instance), and readies its index
   before traffic (``runtime.prepare_index``, the ``SearchIndex.prepare`` port: on AWS the index
   created if missing and its shards awaited; nothing on SQLite);
4. :func:`first_start` bootstraps an empty store, or checks ``MNEMO_BOOTSTRAP_KEY`` against the
   keys a store already has and says how to get an admin key when none is usable;
5. the caller prints :func:`banner` at once — the admin key a bootstrap created is the first
   thing written after it exists, so a start cannot fail between creating a key and showing it
   (if the instances then fail to start, the key has been shown).

Every failure is a :class:`StartupError`: one line saying what to do, and the exit code of
``mnemo.local.cli`` (docs/operations.md, "Exit codes").
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mnemo.local.cli.output import EXIT_ERROR, EXIT_UNAVAILABLE, EXIT_USAGE, missing_aws_extra

if TYPE_CHECKING:
    from mnemo.config import Settings
    from mnemo.ports import Ports
    from mnemo.service.tenancy import NewKey

#: how long ``mnemo serve --backend aws`` waits for its index's primary shards to start
INDEX_WAIT_S = 30.0


class StartupError(Exception):
    """Why the server cannot start: one line for the console, a code for --json, an exit code."""

    def __init__(self, message: str, code: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.exit_code = exit_code


@dataclass(frozen=True)
class Plan:
    host: str
    port: int
    cfg: Settings
    bootstrap_key: str | None
    #: how the user runs ``mnemo`` (``.venv/bin/mnemo``, ``mnemo --data-dir x``), for hints
    command: str = "mnemo"

    @property
    def data_dir(self) -> Path | None:
        return self.cfg.data_dir if self.cfg.backend == "sqlite" else None

    @property
    def where(self) -> str:
        return str(self.cfg.sqlite_path) if self.cfg.backend == "sqlite" else "DynamoDB + OpenSearch"


@dataclass(frozen=True)
class FirstStart:
    #: the admin key a bootstrap created, to print once
    created: NewKey | None = None
    #: things the user should know (stderr), e.g. how to create a missing admin key
    notes: list[str] = field(default_factory=list)


def plan(cfg: Settings, host: str, port: int | None, command: str = "mnemo") -> Plan:
    """Everything checked without a side effect (``cfg``: the validated settings)."""
    from mnemo.errors import InvalidRequest
    from mnemo.service import tenancy

    missing = missing_aws_extra() if cfg.backend == "aws" else None
    if missing is not None:
        raise StartupError(missing, "usage", EXIT_USAGE)
    if port is None:
        port = cfg.port
    if not 0 <= port <= 65535:
        raise StartupError(f"port {port} is out of range: use 1-65535 (0 picks a free one)", "usage", EXIT_USAGE)
    bootstrap_key = cfg.bootstrap_plain_key
    if bootstrap_key is not None:
        try:
            tenancy.check_plain_key(bootstrap_key)
        except InvalidRequest as exc:
            raise StartupError(
                f"MNEMO_BOOTSTRAP_KEY is too short ({len(bootstrap_key)} characters; {exc}): "
                "choose a longer one, or unset it and Mnemo generates a key",
                "invalid_request",
                EXIT_ERROR,
            ) from None
    result = Plan(host, port, cfg, bootstrap_key, command)
    data_dir = result.data_dir
    if data_dir is not None and data_dir.exists() and not data_dir.is_dir():
        raise StartupError(
            f"the data folder {data_dir} is a file, not a folder: pass another --data-dir (or MNEMO_DATA_DIR)",
            "unavailable",
            EXIT_UNAVAILABLE,
        )
    return result


def bind_error(host: str, port: int, exc: OSError) -> StartupError:
    """Why the server could not listen (or start its instances) on ``host:port``."""
    where = f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        message = (
            f"cannot listen on {where}: the port is in use (another `mnemo serve`?): "
            "stop that process, or choose another port with --port N or MNEMO_PORT=N"
        )
        return StartupError(message, "address_in_use", EXIT_ERROR)
    if exc.errno == errno.EACCES:
        message = f"cannot listen on {where}: permission denied (ports below 1024 need privileges): use --port 8787"
        return StartupError(message, "address_in_use", EXIT_ERROR)
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        message = f"cannot listen on {where}: {host!r} is not an address of this machine: use --host 127.0.0.1"
        return StartupError(message, "usage", EXIT_USAGE)
    return StartupError(f"cannot start on {where}: {exc.strerror or exc}", "address_in_use", EXIT_ERROR)


def open_store(p: Plan) -> Ports:
    """The data folder (created if missing) and the backend, opened."""
    from mnemo import runtime
    from mnemo.errors import Unavailable

    data_dir = p.data_dir
    if data_dir is not None:
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StartupError(
                f"cannot create the data folder {data_dir}: {exc.strerror or exc}: "
                "pass another --data-dir (or MNEMO_DATA_DIR)",
                "unavailable",
                EXIT_UNAVAILABLE,
            ) from None
    try:
        ports = runtime.service().ports
        runtime.prepare_index(ports, INDEX_WAIT_S)  # the port knows what its backend needs
        return ports
    except Unavailable as exc:
        raise unavailable(p, exc.message, exc.cause) from None
    except Exception as exc:
        # MNEMO_AWS_CREATE_TABLES: the tables are created as the backend is built, before any port's
        # translate_errors can turn botocore's errors into Unavailable, and only the user's settings
        # (the endpoint, the credentials) can mend that: said here, as for the other outages
        if p.cfg.backend == "aws" and type(exc).__module__.startswith("botocore"):
            raise unavailable(p, "cannot create the DynamoDB tables", f"{type(exc).__name__}: {exc}") from None
        raise


def unavailable(p: Plan, message: str, cause: str | None) -> StartupError:
    """The store cannot be opened or reached: what, where, and why (exit 3)."""
    detail = f" ({cause})" if cause and cause not in message else ""
    if p.cfg.backend == "aws":
        what = message if message.startswith("cannot") else "cannot reach the AWS backend"
        dynamodb = p.cfg.dynamodb_endpoint_url or f"the regional endpoint of {p.cfg.aws_region or 'the default region'}"
        text = (
            f"{what}{detail}: DynamoDB at {dynamodb}, OpenSearch at {p.cfg.opensearch_endpoint}; check that they "
            "answer, or point MNEMO_DYNAMODB_ENDPOINT_URL / MNEMO_OPENSEARCH_ENDPOINT at them"
        )
    else:
        path = str(p.cfg.sqlite_path)
        what = message if path in message else f"cannot use the SQLite store at {path}"
        text = f"{what}{detail}: pass another --data-dir (or MNEMO_DATA_DIR)"
    return StartupError(text, "unavailable", EXIT_UNAVAILABLE)


def first_start(ports: Ports, p: Plan) -> FirstStart:
    """Bootstrap an empty store; on a store with keys, make sure the user can get in."""
    from mnemo.errors import MnemoError, Unavailable
    from mnemo.service import tenancy

    try:
        with first_start_lock(p.data_dir):
            created = tenancy.bootstrap(ports, plain_key=p.bootstrap_key)
        if created is not None:
            return FirstStart(created)
        if p.bootstrap_key is not None:
            key = tenancy.registered_key(ports, p.bootstrap_key)
            if key is None or key.revoked:
                state = "was revoked" if key is not None else "is not a key of this store"
                raise StartupError(
                    f"MNEMO_BOOTSTRAP_KEY {state} (it only sets the admin key of a new, empty store, and "
                    f"{p.where} is not empty): unset it, or start on a new --data-dir; "
                    f"to create another admin key: {admin_key_command(p, ports)}",
                    "conflict",
                    EXIT_ERROR,
                )
            return FirstStart()
        orphaned = tenancy.without_admin_key(ports)
        if orphaned:
            return FirstStart(
                notes=[
                    f"mnemo: note: no workspace of {p.where} has an active admin key; "
                    f"to create one (printed once): {admin_key_command(p, ports, orphaned[0].id)}"
                ]
            )
        return FirstStart()
    except Unavailable as exc:
        raise unavailable(p, exc.message, exc.cause) from None
    except MnemoError as exc:
        raise StartupError(exc.message, exc.code, EXIT_ERROR) from None


#: beside the SQLite file: held while one process decides whether the store is new
LOCK_NAME = ".first-start.lock"


@contextlib.contextmanager
def first_start_lock(data_dir: Path | None) -> Iterator[None]:
    """Two ``mnemo serve`` started at once on one new data folder: the second waits for the
    first's bootstrap, then finds a store that has its admin key (one workspace, one key, not
    two of each). An exclusive ``flock`` on a file in the data folder; where ``fcntl`` does not
    exist (Windows) there is no lock and the race stays (docs/operations.md)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    if data_dir is None:
        yield
        return
    with open(data_dir / LOCK_NAME, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def admin_key_command(p: Plan, ports: Ports, workspace_id: str | None = None) -> str:
    if workspace_id is None:
        workspaces = ports.tenants.list_workspaces()
        workspace_id = workspaces[0].id if len(workspaces) == 1 else "ws_…"
    return f"{p.command} key create -w {workspace_id} --label admin --scope admin"


def banner(url: str, p: Plan, first: FirstStart) -> list[str]:
    """What ``mnemo serve`` prints on stdout once it listens."""
    lines = [
        f"Mnemo listening on {url} (backend: {p.cfg.backend}, data: {p.where})",
        f"  REST {url}/v1/tools/<tool>   MCP {url}/mcp   Ctrl-C stops",
    ]
    if p.cfg.backend == "aws":
        lines.append(f"  the indexer follows the stream of {p.cfg.memories_table}, as on AWS")
    if first.created is not None:
        lines += [
            "Created the default workspace and project. Admin API key (shown once):",
            f"  {first.created.plain}",
            f'  export MNEMO_KEY="{first.created.plain}"',
        ]
    return lines
