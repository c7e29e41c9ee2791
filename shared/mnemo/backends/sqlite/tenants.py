"""Workspaces, projects (slug unique per workspace), API keys (hash only) and OAuth principals, as JSON bodies."""

from __future__ import annotations

import sqlite3
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import Database, outage
from mnemo.models.records import ApiKey, Principal, Project, RateLimits, Workspace
from mnemo.ports import VersionConflict


@translate_errors(outage)
class SqliteTenantStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def is_empty(self) -> bool:
        return self.db.conn().execute("SELECT 1 FROM workspaces LIMIT 1").fetchone() is None

    def create_workspace(self, workspace: Workspace, default_project: Project) -> None:
        with self.db.write() as conn:
            conn.execute("INSERT INTO workspaces (id, body) VALUES (?, ?)", (workspace.id, workspace.model_dump_json()))
            self.create_project(default_project)

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        row = self.db.conn().execute("SELECT body FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
        return Workspace.model_validate_json(row["body"]) if row else None

    def list_workspaces(self) -> list[Workspace]:
        rows = self.db.conn().execute("SELECT body FROM workspaces ORDER BY id").fetchall()
        return [Workspace.model_validate_json(r["body"]) for r in rows]

    def set_limits(self, workspace_id: str, limits: RateLimits | None) -> None:
        self._update_workspace(workspace_id, {"limits": limits})

    def set_secret_check(self, workspace_id: str, on: bool) -> None:
        self._update_workspace(workspace_id, {"secret_check": on})

    def _update_workspace(self, workspace_id: str, changes: dict[str, Any]) -> None:
        with self.db.write() as conn:
            workspace = self.get_workspace(workspace_id)
            if workspace is None:
                raise VersionConflict(workspace_id)
            updated = workspace.model_copy(update=changes)
            conn.execute("UPDATE workspaces SET body = ? WHERE id = ?", (updated.model_dump_json(), workspace_id))

    def create_project(self, project: Project) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO projects (id, workspace_id, slug, body) VALUES (?,?,?,?)",
                    (project.id, project.workspace_id, project.slug, project.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(project.slug) from None

    def get_project(self, workspace_id: str, ref: str) -> Project | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT body FROM projects WHERE workspace_id = ? AND (id = ? OR slug = ?)", (workspace_id, ref, ref)
            )
            .fetchone()
        )
        return Project.model_validate_json(row["body"]) if row else None

    def list_projects(self, workspace_id: str) -> list[Project]:
        rows = self.db.conn().execute("SELECT body FROM projects WHERE workspace_id = ? ORDER BY slug", (workspace_id,))
        return [Project.model_validate_json(r["body"]) for r in rows.fetchall()]

    def create_key(self, key: ApiKey) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO api_keys (id, workspace_id, body) VALUES (?,?,?)",
                    (key.id, key.workspace_id, key.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(key.id) from None

    def get_key(self, key_id: str) -> ApiKey | None:
        row = self.db.conn().execute("SELECT body FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return ApiKey.model_validate_json(row["body"]) if row else None

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        rows = self.db.conn().execute("SELECT body FROM api_keys WHERE workspace_id = ? ORDER BY id", (workspace_id,))
        return [ApiKey.model_validate_json(r["body"]) for r in rows.fetchall()]

    def revoke_key(self, workspace_id: str, key_id: str) -> bool:
        with self.db.write() as conn:
            key = self.get_key(key_id)
            if key is None or key.workspace_id != workspace_id:
                return False
            revoked = key.model_copy(update={"revoked": True})
            conn.execute("UPDATE api_keys SET body = ? WHERE id = ?", (revoked.model_dump_json(), key_id))
            return True

    def create_principal(self, principal: Principal) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO principals (id, workspace_id, body) VALUES (?,?,?)",
                    (principal.id, principal.workspace_id, principal.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(principal.id) from None

    def get_principal(self, principal_id: str) -> Principal | None:
        row = self.db.conn().execute("SELECT body FROM principals WHERE id = ?", (principal_id,)).fetchone()
        return Principal.model_validate_json(row["body"]) if row else None

    def list_principals(self, workspace_id: str) -> list[Principal]:
        rows = self.db.conn().execute("SELECT body FROM principals WHERE workspace_id = ? ORDER BY id", (workspace_id,))
        return [Principal.model_validate_json(r["body"]) for r in rows.fetchall()]

    def remove_principal(self, workspace_id: str, principal_id: str) -> bool:
        with self.db.write() as conn:
            cur = conn.execute("DELETE FROM principals WHERE id = ? AND workspace_id = ?", (principal_id, workspace_id))
            return cur.rowcount > 0
