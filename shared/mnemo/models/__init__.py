"""Pydantic models of the contract: stored records, tool arguments and results, error bodies."""
