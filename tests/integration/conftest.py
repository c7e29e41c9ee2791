"""Fixtures for tests against real local servers. The session's OpenSearch node (``opensearch_node``)
and the AWS stack (``aws_stack``) live in tests/conftest.py: one node serves every suite."""
