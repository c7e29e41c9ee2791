"""Fixtures for tests against real local servers."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator

import pytest

from tests.support.opensearch_node import OpenSearchError, OpenSearchNode, available, fetch


def _unavailable(reason: str) -> None:
    """Skip loudly, or fail when MNEMO_REQUIRE_OPENSEARCH=1 (CI must not silently skip)."""
    if os.environ.get("MNEMO_REQUIRE_OPENSEARCH") == "1":
        pytest.fail(f"MNEMO_REQUIRE_OPENSEARCH=1 but a real OpenSearch cannot run here: {reason}", pytrace=False)
    message = f"SKIPPING real-OpenSearch tests: {reason} (set MNEMO_REQUIRE_OPENSEARCH=1 to make this an error)"
    warnings.warn(message, stacklevel=2)
    print(f"\n*** {message}", file=sys.stderr)
    pytest.skip(message)


@pytest.fixture(scope="session")
def opensearch_node() -> Iterator[OpenSearchNode]:
    """One real OpenSearch 2.19 node on 127.0.0.1 for the whole session (stopped and deleted at the end).

    Tests that pause()/freeze() it must resume()/thaw() it before they return.
    """
    ok, reason = available()
    if not ok:
        _unavailable(reason)
    try:
        fetch()  # a download failure (offline, no Maven Central) is "unavailable", not a test failure
    except OpenSearchError as exc:
        _unavailable(str(exc))
    node = OpenSearchNode().start()  # a start-up failure is a real error: it carries the log tail
    try:
        yield node
    finally:
        node.stop()
