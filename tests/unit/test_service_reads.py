"""Work on the hot path: one tool call reads its workspace once (limits and default project)."""

from __future__ import annotations

from mnemo.embedding import default_embedder
from mnemo.service import tenancy
from mnemo.service.pipeline import Service


class CountingTenants:
    def __init__(self, inner):
        self.inner = inner
        self.workspace_reads = 0

    def get_workspace(self, workspace_id):
        self.workspace_reads += 1
        return self.inner.get_workspace(workspace_id)

    def __getattr__(self, name):
        return getattr(self.inner, name)


class Ports:
    def __init__(self, inner, tenants):
        self.store, self.index, self.limiter = inner.store, inner.index, inner.limiter
        self.idempotency, self.tenants = inner.idempotency, tenants


def test_a_tool_call_on_the_default_project_reads_the_workspace_once(sqlite_backend):
    key = tenancy.bootstrap(sqlite_backend)
    tenants = CountingTenants(sqlite_backend.tenants)
    svc = Service(Ports(sqlite_backend, tenants), embedder=default_embedder())
    caller = svc.authenticate(f"Bearer {key.plain}")

    svc.invoke("memory_search", caller, {"q": ""})

    assert tenants.workspace_reads == 1
