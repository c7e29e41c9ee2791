"""The composition root: builds the service once per process from the validated settings (Lambda
cold start, or the local server's start), over the backend and with the embedder they name. The
functions' handlers hand this module to their routers as their ``api.http.ServiceProvider``, and
``mnemo mcp`` hands the service it builds to the stdio server; nothing below them asks for it.
Tests call :func:`use` to inject their own service."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mnemo import coldstart
from mnemo.config import Settings, split_list
from mnemo.models.records import RateLimits
from mnemo.ports import Ports, StoreChange
from mnemo.service.pipeline import Service
from mnemo.service.principals import TokenAuth

_lock = threading.Lock()
_settings: Settings | None = None
_service: Service | None = None


def settings() -> Settings:
    """The process's settings: those :func:`use` was given (the CLI builds its own), else the
    environment's, read once; a variable that names no setting is one warning in the log."""
    global _settings
    with _lock:
        if _settings is None:
            _settings = Settings()
            from mnemo.config import unknown_variables
            from mnemo.observability import logger

            for line in unknown_variables():
                logger.warning(line)
        return _settings


def build_ports(cfg: Settings) -> Ports:
    if cfg.backend == "sqlite":
        from mnemo.backends.sqlite import SqliteBackend

        return SqliteBackend(cfg.sqlite_path)
    from mnemo.backends.aws import AwsBackend

    backend = AwsBackend.from_settings(cfg)
    if cfg.aws_create_tables:  # local use only: in AWS, CloudFormation owns the tables
        from mnemo.local.tables import create_tables

        create_tables(backend.dynamodb, backend.tables.by_logical_id())
    return backend


def resolve_embedder(cfg: Settings) -> tuple[Settings, str | None]:
    """``cfg`` with ``embedder = auto`` (the default) replaced by the embedder it stands for here
    (``mnemo.embedding.resolve``), so that the processes a server starts, handed these settings, run
    one choice; and the line to tell the user when that is the ``static`` fallback, else None."""
    from mnemo.embedding import FALLBACK, resolve

    if cfg.embedder.strip().lower() != "auto":
        return cfg, None
    concrete = resolve("auto")
    return cfg.model_copy(update={"embedder": concrete}), FALLBACK if concrete == "static" else None


def build_token_auth(cfg: Settings) -> TokenAuth | None:
    """How access tokens are accepted (docs/auth.md); None while no issuer is configured."""
    if not cfg.oauth_enabled:
        return None
    from mnemo.oauth.verifier import JwtVerifier

    verifier = JwtVerifier.from_settings(cfg)
    assert verifier is not None  # oauth_enabled: issuers are configured
    return TokenAuth(
        verifier=verifier,
        issuers=verifier.policy.issuers,
        scope_prefix=cfg.oauth_scope_prefix,
        group_claims=tuple(split_list(cfg.oauth_group_claims)),
    )


def prepare_index(ports: Ports, wait_s: float) -> None:
    """Before traffic (``mnemo serve``, whatever the backend: ``SearchIndex.prepare``): on AWS the
    index created when missing, its mapping upgraded and its primary shards started, waiting at
    most ``wait_s``; else a search in the seconds the indexer's first write spends creating it
    fails (docs/aws.md, "The index before traffic"). Nothing to do on SQLite."""
    ports.index.prepare(wait_s)


def stream_change(raw: dict[str, Any]) -> StoreChange | None:
    """One record of the memories table's stream (the indexer function's event, in Lambda's
    form) as a change of a memory, or None when it changes nothing the index holds. The stream is
    the AWS backend's, so reading it is too; the indexer's handler asks here, as no handler knows
    a backend."""
    from mnemo.backends.aws.stream import change_from_stream_record

    return change_from_stream_record(raw)


def service() -> Service:
    global _service
    if _service is None:
        cfg = settings()
        with _lock:
            if _service is None:
                _service = build_service(build_ports(cfg), cfg)
                coldstart.built()  # in Lambda: what building it loaded stays out of the collector's walks
    return _service


def build_service(ports: Ports, cfg: Settings) -> Service:
    """The service over ``ports`` with the embedder and default rate limits ``cfg`` names."""
    from mnemo.embedding import build_embedder

    limits = RateLimits(search=cfg.search_per_minute, write=cfg.write_per_minute)
    embedder = build_embedder(cfg.embedder, cfg)
    # an embedder slower than a write's budget (minilm) embeds after the answer, in a process that
    # outlives its calls: never in Lambda, which freezes an instance once it has answered
    lambda_ = "AWS_LAMBDA_FUNCTION_NAME" in os.environ
    later = bool(getattr(embedder, "embed_after_answer", False)) and not lambda_
    # and its query's vector beside recall's word search, on a second thread when a core is free:
    # not in Lambda either, where a small function's share of a core is all it gets
    return Service(
        ports,
        embedder=embedder,
        default_limits=limits,
        tokens=build_token_auth(cfg),
        embed_after_answer=later,
        query_vector_aside=not lambda_,
    )


def warm() -> Service:
    """Build the process's service and load its embedder's model now (``mnemo.embedding.warm``: a
    local model loads and embeds once, a remote one is not called), so a server's first query does
    not pay for it; numpy too on SQLite, which the first vector search would import otherwise."""
    from mnemo.embedding import warm as warm_embedder

    svc = service()
    warm_embedder(svc.embedder)
    if settings().backend == "sqlite":
        import numpy  # noqa: F401

    return svc


def finish(timeout_s: float = 5.0) -> None:
    """Before a long-lived process ends (a server's worker, ``mnemo mcp`` at EOF): wait at most
    ``timeout_s`` for the vectors its writes left for after their answer; what is still queued then
    is embedded by the next cleanup run (a record without a vector)."""
    svc = _service
    if svc is not None and svc.embed_after is not None:
        svc.embed_after.drain(timeout_s)


def use(svc: Service | None, cfg: Settings | None = None) -> None:
    """Replace the process's service (and settings); ``None`` resets to lazy construction."""
    global _service, _settings
    with _lock:
        _service = svc
        _settings = cfg


@contextmanager
def using(svc: Service, cfg: Settings) -> Iterator[None]:
    """:func:`use` for the length of a ``with`` block; the previous service and settings after."""
    global _service, _settings
    with _lock:
        previous = _service, _settings
        _service, _settings = svc, cfg
    try:
        yield
    finally:
        with _lock:
            _service, _settings = previous
