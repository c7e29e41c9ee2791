"""moto's ``Query`` reading one partition instead of the whole table.

moto (5.x) answers every ``Query`` — on the table or on a global secondary index — by listing
*every* item of the table, sorting them all, and then keeping those of the asked partition
(``Table.query`` over ``Table.all_items()``). So each query costs what the whole table holds, and
the suite's shared tables grow through ``make test``: the contract state machine on AWS took 43 s
alone and 159 s late in a CI run, its listings and read-your-writes queries slowing with
everything the tests before it wrote. DynamoDB reads the one partition.

``install`` keeps moto's own ``query`` and changes only which items it walks: when the partition is
known — a table query (its hash key), or an index whose hash key is the table's hash key (as the
memories table's ``recent`` index: the index's partition ``pk = X`` holds exactly the items of the
table's partition ``X``) — ``all_items`` yields that partition's items, in the order the whole
listing had them. Any other query (an index over another attribute, a scan) walks the whole table
as before. moto's filters, range conditions, sorting, paging and projections all still run, on a
subset that holds every item they could keep, so the answer is the same;
``tests/unit/test_moto_queries.py`` holds it to the original.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.support.moto_patch import MotoPatch

_HINT = threading.local()  # moto's server answers on several threads: the partition is per call


def _partition_of(table: Any, hash_key: Any, index_name: str | None, conditions: Any) -> Any:
    """The table partition that holds every item this query can return, or None for the whole table."""
    if not index_name:
        return hash_key
    index = {i.name: i for i in table.all_indexes()}.get(index_name)
    if index is None:
        return None  # moto raises its own error
    hashes = [key["AttributeName"] for key in index.schema if key["KeyType"] == "HASH"]
    if hashes != [table.hash_key_attr]:
        return None
    for name, value in conditions or ():
        if name == table.hash_key_attr:
            return value
    return None


def _query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
    index_name = kwargs.get("index_name")
    if index_name is None and len(args) >= 7:
        index_name = args[6]
    conditions = kwargs.get("hash_key_conditions")
    if conditions is None and len(args) >= 10:
        conditions = args[9]
    _HINT.partition = (self, _partition_of(self, hash_key, index_name, conditions))
    try:
        return _PATCH.original("query")(self, hash_key, *args, **kwargs)
    finally:
        _HINT.partition = None


def _all_items(self: Any) -> list[Any]:
    hint = getattr(_HINT, "partition", None)
    if hint is None or hint[0] is not self or hint[1] is None:
        return _PATCH.original("all_items")(self)  # type: ignore[no-any-return]
    partition = self.items.get(hint[1])
    if partition is None:
        return []
    if not self.range_key_attr:
        return [partition]
    return sorted(partition.values(), key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key)


_PATCH = MotoPatch("moto.dynamodb.models.table:Table", query=_query, all_items=_all_items)
#: patch moto's ``Table`` (idempotent); moto's own again (for the unit test's comparison)
install, uninstall = _PATCH.install, _PATCH.uninstall
