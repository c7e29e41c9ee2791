"""Surfaces: REST routes, the MCP dispatcher and the one place errors become responses."""
