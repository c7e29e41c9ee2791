"""``MemoryFilter`` as SQL over the ``memories`` table (alias ``m``): expiry, kind, LIKE patterns,
the updated-at window, session, tags and team visibility.
Shared by listings (``store.py``) and searches (``index.py``)."""

from __future__ import annotations

from typing import Any

from mnemo.models.common import format_ts
from mnemo.ports import MemoryFilter


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    clauses = [f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)"]
    params: list[Any] = [format_ts(flt.now)]
    if not flt.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    if flt.kind is not None:
        clauses.append(f"{alias}.kind_fold = ?")
        params.append(flt.kind.casefold())
    if flt.kind_like is not None and flt.kind_like != "%":
        clauses.append(f"{alias}.kind_fold LIKE ? ESCAPE '\\'")
        params.append(flt.kind_like.casefold())
    if flt.path_like is not None and flt.path_like != "%":
        clauses.append(f"{alias}.path_fold LIKE ? ESCAPE '\\'")
        params.append(flt.path_like.casefold())
    if flt.updated_after is not None:
        clauses.append(f"{alias}.updated_at >= ?")
        params.append(format_ts(flt.updated_after))
    if flt.updated_before is not None:
        clauses.append(f"{alias}.updated_at < ?")
        params.append(format_ts(flt.updated_before))
    if flt.session is not None:
        clauses.append(f"{alias}.session = ?")
        params.append(flt.session)
    for tag in flt.tags_all:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
        params.append(tag)
    if flt.visible_teams is not None or not flt.include_unteamed:
        team_clauses = []
        if flt.include_unteamed:
            team_clauses.append(f"{alias}.team_id IS NULL")
        teams = sorted(flt.visible_teams or ())
        if teams:
            team_clauses.append(f"{alias}.team_id IN ({','.join('?' * len(teams))})")
            params.extend(teams)
        clauses.append("(" + (" OR ".join(team_clauses) or "0") + ")")
    return " AND ".join(clauses), params
