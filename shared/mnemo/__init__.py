"""Mnemo: a memory service for AI agents (the shared Lambda layer package)."""

__version__ = "0.1.0"
