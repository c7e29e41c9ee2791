-- The embedded backend's schema. Records keep their JSON body (the source of truth) plus the
-- columns that filters and ordering need; text columns ending in _fold hold case-folded values
-- so LIKE can run with case_sensitive_like on and stay Unicode-aware.
CREATE TABLE IF NOT EXISTS workspaces (
    id   TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS projects (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    slug         TEXT NOT NULL,
    body         TEXT NOT NULL,
    UNIQUE (workspace_id, slug)
);
CREATE TABLE IF NOT EXISTS api_keys (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    body         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS api_keys_workspace ON api_keys (workspace_id);
CREATE TABLE IF NOT EXISTS memories (
    seq          INTEGER PRIMARY KEY,           -- also the rowid of the memory's FTS row
    id           TEXT NOT NULL,                 -- unique inside its project (a copied project keeps ids)
    workspace_id TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    kind_fold    TEXT NOT NULL,                 -- '' when the memory has no kind
    path_fold    TEXT NOT NULL,                 -- '' when the memory has no path
    team_id      TEXT,
    tags         TEXT NOT NULL,                 -- JSON array
    expires_at   TEXT,                          -- RFC 3339 UTC, ms: compares as text
    updated_at   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    needs_repair INTEGER NOT NULL DEFAULT 0,
    body         TEXT NOT NULL,
    UNIQUE (project_id, id)
);
CREATE INDEX IF NOT EXISTS memories_recent ON memories (project_id, updated_at DESC);
CREATE INDEX IF NOT EXISTS memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_repair ON memories (needs_repair) WHERE needs_repair = 1;
-- Analysed terms (mnemo.text) joined by spaces; the ascii tokenizer splits only on ASCII
-- punctuation and spaces, so every analysed term stays one token. Each term carries a short
-- prefix derived from its project id (index._scoped_text), so a term's posting list holds one
-- project's rows; `scope` holds one token per project.
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (
    scope, content, tags, path,
    tokenize = 'ascii',
    detail = 'full'
);
-- The index's own document table: which FTS row holds which memory, at which version (index.py).
CREATE TABLE IF NOT EXISTS index_rows (
    workspace_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    fts_rowid  INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rate_buckets (
    workspace_id TEXT NOT NULL,
    rate_class   TEXT NOT NULL,
    tat_ms       INTEGER NOT NULL,               -- GCRA theoretical arrival time
    PRIMARY KEY (workspace_id, rate_class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    workspace_id TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_ms   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, key)
) WITHOUT ROWID;
-- Where each cleanup walk resumes (mnemo.service.cleanup); one row per walk.
CREATE TABLE IF NOT EXISTS maintenance_checkpoints (
    name       TEXT PRIMARY KEY,
    cursor     TEXT,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
