"""Memories from other tools (``transfer.import_items``, behind ``mnemo import --from``) arrive
under memory_add's rules, on both backends: verbatim, findable by recall, once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mnemo.importers import Item
from mnemo.service import transfer

from tests.contract.conftest import Tenant


def run(tenant: Tenant, items: list[Item], **kwargs: Any) -> dict[str, list[transfer.Outcome]]:
    outcomes = list(
        transfer.import_items(
            tenant.svc.ports, tenant.project, items, source="test-tool", embedder=tenant.svc.embedder, **kwargs
        )
    )
    indexer = getattr(tenant.svc, "indexer", None)
    if indexer is not None:
        indexer.catch_up()
    return {name: [o for o in outcomes if o.result == name] for name in ("added", "skipped", "refused")}


def held(tenant: Tenant) -> int:
    return sum(1 for _ in transfer.export_project(tenant.svc.ports, tenant.project))


ITEMS = [
    Item("line 1", "The staging database is rebuilt every Sunday night", kind="fact", path="ops/db"),
    Item("line 2", "Invoices are exported as PDF/A for the auditors", tags=("billing",), path="finance"),
    Item(
        "line 3",
        "Deploy freeze during the quarterly close",
        kind="decision",
        created_at=datetime(2024, 3, 1, 9, 30, tzinfo=UTC),
        updated_at=datetime(2024, 4, 2, 10, 0, tzinfo=UTC),
    ),
]


def test_every_item_arrives_once_verbatim_with_its_fields_and_times(tenant: Tenant) -> None:
    report = run(tenant, ITEMS)

    assert len(report["added"]) == 3 and not report["skipped"] and not report["refused"]
    for item, outcome in zip(ITEMS, report["added"], strict=True):
        memory = tenant.call("memory_get", id=outcome.memory_id).memory
        assert (memory.content, memory.kind, tuple(memory.tags), memory.path, memory.source) == (
            item.content,
            item.kind,
            item.tags,
            item.path,
            "test-tool",
        )
    dated = tenant.call("memory_get", id=report["added"][2].memory_id).memory
    assert (dated.created_at, dated.updated_at) == (ITEMS[2].created_at, ITEMS[2].updated_at)


def test_imported_memories_are_found_by_recall(tenant: Tenant) -> None:
    report = run(tenant, ITEMS)

    found = tenant.call("recall", query="staging database rebuilt Sunday", mode="lexical")

    assert report["added"][0].memory_id in [r.reference for r in found.results]


def test_a_second_import_adds_nothing(tenant: Tenant) -> None:
    run(tenant, ITEMS)

    again = run(tenant, ITEMS)

    assert not again["added"] and [o.position for o in again["skipped"]] == ["line 1", "line 2", "line 3"]
    assert held(tenant) == 3


def test_a_dry_run_writes_nothing_and_says_what_a_run_would_do(tenant: Tenant) -> None:
    run(tenant, ITEMS[:1])

    dry = run(tenant, [*ITEMS, Item("line 4", "token ghp_" + "a" * 36)], dry_run=True)

    assert [o.position for o in dry["added"]] == ["line 2", "line 3"]
    assert [o.position for o in dry["skipped"]] == ["line 1"]
    assert [o.position for o in dry["refused"]] == ["line 4"]
    assert held(tenant) == 1


def test_private_spans_are_stripped_and_secrets_refused(tenant: Tenant) -> None:
    report = run(
        tenant,
        [
            Item("a", "The VPN password is <private>hunter2-xyz</private>in the vault"),
            Item("b", "<private>only private</private>"),
            Item("c", "aws key AKIAABCDEFGHIJKLMNOP for the build"),
        ],
    )

    (added,) = report["added"]
    assert tenant.call("memory_get", id=added.memory_id).memory.content == "The VPN password is in the vault"
    assert [(o.position, "secret" in (o.reason or "")) for o in report["refused"]] == [("b", False), ("c", True)]


def test_the_contract_limits_hold_for_imports(tenant: Tenant) -> None:
    report = run(
        tenant,
        [
            Item("long", "x" * 4097),
            Item("tag", "a memory with a long tag", tags=("t" * 65,)),
            Item("tags", "a memory with many tags", tags=tuple(f"t{n}" for n in range(21))),
            Item("ok", "a memory within every limit"),
        ],
    )

    assert [o.position for o in report["refused"]] == ["long", "tag", "tags"]
    assert [o.position for o in report["added"]] == ["ok"]


def test_an_import_stays_in_its_project(tenant: Tenant) -> None:
    from tests.contract.conftest import new_tenant

    other = new_tenant(tenant.svc, "other")
    run(other, ITEMS)

    report = run(tenant, ITEMS)

    assert len(report["added"]) == 3
    assert held(other) == 3
