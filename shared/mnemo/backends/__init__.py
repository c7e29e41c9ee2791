"""Adapters implementing ``mnemo.ports``: ``sqlite`` (embedded) and ``aws`` (DynamoDB + OpenSearch)."""
