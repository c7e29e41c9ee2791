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
-- OAuth principals bound to a workspace (service/principals.py): id derived from issuer, kind, value
CREATE TABLE IF NOT EXISTS principals (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    body         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS principals_workspace ON principals (workspace_id);
CREATE TABLE IF NOT EXISTS memories (
    seq          INTEGER PRIMARY KEY,           -- also its document number in the index (postings.doc)
    id           TEXT NOT NULL,                 -- unique inside its project (a copied project keeps ids)
    workspace_id TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    kind_fold    TEXT NOT NULL,                 -- '' when the memory has no kind
    path_fold    TEXT NOT NULL,                 -- '' when the memory has no path
    team_id      TEXT,
    session      TEXT,                          -- Memory.session (NULL: none)
    superseded_by TEXT,                         -- Memory.superseded_by (NULL: current): filters read it
    tags         TEXT NOT NULL,                 -- JSON array
    expires_at   TEXT,                          -- RFC 3339 UTC, ms: compares as text
    updated_at   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    needs_repair INTEGER NOT NULL DEFAULT 0,
    body         TEXT NOT NULL,
    dedup        TEXT,                          -- mnemo.text.fingerprint when the record holds its claim
    vec          BLOB,                          -- the content's vector: float32 little-endian (NULL: none yet)
    vec_model    TEXT,                          -- the embedder model that made it
    vec_stamp    INTEGER,                       -- vector_stamps.stamp when it was written
    UNIQUE (project_id, id)
);
-- (memories_session, on (project_id, session, id), and memories_vec_stamp, on (project_id,
-- vec_stamp), are made by SqliteMemoryStore.migrate too: a database written before vectors gets the
-- column first)
-- (memories_dedup, the unique index of claims, is made by SqliteMemoryStore.migrate: a database
-- written before the column existed gets the column first)
CREATE INDEX IF NOT EXISTS memories_recent ON memories (project_id, updated_at DESC);
CREATE INDEX IF NOT EXISTS memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_repair ON memories (needs_repair) WHERE needs_repair = 1;
-- Per project, a counter every vector write raises (stamp) and one every vector removal raises
-- (removed): the vector search's cache (index.py) reloads what changed since it last looked.
CREATE TABLE IF NOT EXISTS vector_stamps (
    project_id TEXT PRIMARY KEY,
    stamp      INTEGER NOT NULL,
    removed    INTEGER NOT NULL
) WITHOUT ROWID;
-- The full-text index (index.py): a project's dictionary of keys (stems, CJK terms, and '=' + an
-- English word that differs from its stem), each key's postings ordered by impact (best first),
-- the index's own document table, and documents per project.
CREATE TABLE IF NOT EXISTS index_terms (
    id         INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    df         INTEGER NOT NULL,                -- documents holding the key
    rev        INTEGER NOT NULL DEFAULT 0,      -- new (random) whenever its postings change (kept.py)
    UNIQUE (project_id, key)
);
CREATE TABLE IF NOT EXISTS postings (
    term   INTEGER NOT NULL,                    -- index_terms.id
    impact INTEGER NOT NULL,                    -- the key's BM25 weight in the document (no IDF), x 10000
    doc    INTEGER NOT NULL,                    -- memories.seq
    PRIMARY KEY (term, impact DESC, doc DESC)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_doc ON postings (doc, term);
-- Which document holds which memory, at which version (index.py).
CREATE TABLE IF NOT EXISTS index_docs (
    workspace_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    doc        INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_stats (
    project_id TEXT PRIMARY KEY,
    docs       INTEGER NOT NULL
) WITHOUT ROWID;
-- What the index was built with (the analysis: mnemo.text.ANALYSIS).
CREATE TABLE IF NOT EXISTS index_meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rate_buckets (
    workspace_id TEXT NOT NULL,
    rate_class   TEXT NOT NULL,
    tat_ms       INTEGER NOT NULL,               -- GCRA theoretical arrival time
    PRIMARY KEY (workspace_id, rate_class)
) WITHOUT ROWID;
-- Powertools' idempotency records (backends/sqlite/idempotency.py), one per hashed [workspace, key]:
-- a claim (INPROGRESS) while the first call runs, then its result (COMPLETED) for 24 hours.
CREATE TABLE IF NOT EXISTS idempotency_records (
    id                     TEXT PRIMARY KEY,     -- "mnemo.memory_add#<sha256 of [workspace, key]>"
    status                 TEXT NOT NULL,        -- INPROGRESS or COMPLETED
    expiration             INTEGER NOT NULL,     -- epoch seconds: the record holds its key until then
    in_progress_expiration INTEGER,              -- epoch milliseconds: a claim's end
    data                   TEXT,                 -- the first call's result (JSON), once COMPLETED
    validation             TEXT                  -- sha256 of the call's fingerprint
) WITHOUT ROWID;
-- Where each cleanup walk resumes (mnemo.service.cleanup); one row per walk.
CREATE TABLE IF NOT EXISTS maintenance_checkpoints (
    name       TEXT PRIMARY KEY,
    cursor     TEXT,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
-- A memory's earlier versions (MemoryStore.keep_version / history): the record's JSON body at each
-- version it had, its content's UTF-8 bytes (the history's bound), and per memory how many were dropped.
CREATE TABLE IF NOT EXISTS memory_versions (
    project_id TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    bytes      INTEGER NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (project_id, memory_id, version)
);
CREATE TABLE IF NOT EXISTS memory_versions_dropped (
    project_id TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    dropped    INTEGER NOT NULL,
    PRIMARY KEY (project_id, memory_id)
);
