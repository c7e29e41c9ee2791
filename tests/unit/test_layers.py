"""The architecture, held by the import graph: handlers → api → service → ports ← adapters.

Every ``import`` in ``shared/mnemo`` and in the Lambda handlers of ``functions/``
(function-level and ``TYPE_CHECKING`` ones included) is an edge; the rules below say which edges
may not exist. The adapters are the backends and the
embedders (``mnemo.embedding``, behind the ``Embedder`` port). ``mnemo.runtime`` is the
composition root: the one module that picks a backend and an embedder, so it alone may import
them; the routers are handed the service (``api.http.ServiceProvider``) and never import it.
A handler knows no backend: what differs by backend at start-up is a port's method
(``SearchIndex.ensure`` / ``prepare``) or the root's (``runtime.stream_change``).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "shared" / "mnemo"
#: the Lambda handlers (``functions.<name>.handler``): thin, over the api and the runtime
FUNCTIONS = ROOT / "functions"

#: layer → the mnemo packages it must never import
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "mnemo.service": ("mnemo.backends", "mnemo.embedding", "mnemo.api", "mnemo.local", "mnemo.runtime"),
    "mnemo.api": ("mnemo.backends", "mnemo.embedding", "mnemo.local", "mnemo.runtime"),
    "mnemo.local": ("mnemo.backends", "mnemo.embedding"),
    "mnemo.backends": ("mnemo.service", "mnemo.embedding", "mnemo.api", "mnemo.local", "mnemo.runtime"),
    "mnemo.embedding": ("mnemo.service", "mnemo.backends", "mnemo.api", "mnemo.local", "mnemo.runtime"),
    # the token verifier: an adapter of the TokenVerifier port, like a backend
    "mnemo.oauth": ("mnemo.service", "mnemo.embedding", "mnemo.api", "mnemo.backends", "mnemo.local", "mnemo.runtime"),
    # a handler reaches a backend through the runtime and the ports only
    "functions": ("mnemo.backends", "mnemo.embedding", "mnemo.local"),
}
#: modules that may import only these mnemo modules (leaves of the graph)
ONLY: dict[str, tuple[str, ...]] = {
    "mnemo.models": ("mnemo.models", "mnemo.like", "mnemo.text"),
    "mnemo.ports": ("mnemo.ports", "mnemo.models", "mnemo.gcra", "mnemo.text"),
    "mnemo.errors": ("mnemo.gcra",),
    "mnemo.gcra": (),
    "mnemo.text": (),
    "mnemo.like": (),
    "mnemo.ids": (),
    "mnemo.config": ("mnemo.clientconfig",),
    "mnemo.hook": ("mnemo.hook", "mnemo.clientconfig"),  # Claude Code's hook client: stdlib + its settings
    "mnemo.clientconfig": (),  # the hook's settings, read on every prompt: the standard library only
    "mnemo.observability": (),
    "mnemo.coldstart": (),  # imported first by every handler: the standard library only
    "mnemo.api.mcp": ("mnemo.api.mcp", "mnemo.api.strict_json"),  # the protocol layer: stdlib only
    "mnemo.api.oauth": ("mnemo.config", "mnemo.models", "mnemo.errors"),  # RFC 9728 metadata, challenges
}


def module_name(path: Path) -> str:
    base = FUNCTIONS.parent if path.is_relative_to(FUNCTIONS) else PACKAGE.parent
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from mnemo import runtime`
    return {name for name in found if name.startswith("mnemo.")}


@functools.cache
def _parsed() -> dict[str, frozenset[str]]:
    paths = [*PACKAGE.rglob("*.py"), *FUNCTIONS.rglob("*.py")]
    return {module_name(path): frozenset(imports_of(path)) for path in paths}


def graph() -> dict[str, set[str]]:
    """Every module's imports: the package is parsed once per run, each caller gets its own copy."""
    return {module: set(targets) for module, targets in _parsed().items()}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for layer, banned in FORBIDDEN.items():
            if _within(module, layer):
                found += [f"{module} imports {t}" for t in sorted(targets) if any(_within(t, b) for b in banned)]
        for leaf, allowed in ONLY.items():
            if _within(module, leaf):
                # a package on the way to an allowed module (``from mnemo.api import strict_json``) is fine
                own = [t for t in targets if not any(_within(t, a) or a.startswith(t + ".") for a in allowed)]
                found += [f"{module} imports {t}" for t in sorted(own)]
    return found


def test_no_layer_is_crossed():
    assert violations(graph()) == []


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("mnemo.service.memories", "mnemo.backends.sqlite.store"),
        ("mnemo.service.pipeline", "mnemo.api.http"),
        ("mnemo.api.routers.tools", "mnemo.backends.aws"),
        ("mnemo.local.cli.admin", "mnemo.backends.sqlite"),
        ("mnemo.backends.aws.store", "mnemo.service.context"),
        ("mnemo.models.tools", "mnemo.service.identity"),
        ("mnemo.api.mcp.endpoint", "mnemo.observability"),
        ("mnemo.service.vectors", "mnemo.embedding.static"),
        ("mnemo.service.pipeline", "mnemo.embedding"),
        ("mnemo.api.routers.mcp", "mnemo.runtime"),
        ("mnemo.embedding.static", "mnemo.backends.sqlite.vectors"),
        ("mnemo.backends.aws.index", "mnemo.embedding"),
        ("functions.cleanup.handler", "mnemo.backends.aws"),
        ("functions.indexer.handler", "mnemo.backends.aws.stream"),
    ],
)
def test_the_check_catches_a_crossing(module, target):
    edges = graph()
    edges[module] = {*edges.get(module, set()), target}

    assert f"{module} imports {target}" in violations(edges)


def test_the_graph_sees_every_module_and_function_level_imports():
    edges = graph()

    assert "mnemo.service.pipeline" in edges and "mnemo.backends.sqlite.index" in edges
    # the handlers are read too, each under its own name
    handlers = {f"functions.{name}.handler" for name in ("admin", "cleanup", "indexer", "mcp", "read", "write")}
    assert handlers <= set(edges)
    assert "mnemo.runtime" in edges["functions.cleanup.handler"]
    # runtime imports its backends inside a function: still an edge (and allowed: it is the root)
    assert "mnemo.backends.sqlite" in edges["mnemo.runtime"]
    assert "mnemo.embedding" in edges["mnemo.runtime"]
