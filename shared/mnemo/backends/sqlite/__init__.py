"""The embedded backend: one SQLite file (WAL) holding records, the full-text index, tenants,
rate-limit buckets and idempotency records."""

from mnemo.backends.sqlite.backend import SqliteBackend

__all__ = ["SqliteBackend"]
