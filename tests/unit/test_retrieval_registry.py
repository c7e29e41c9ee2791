"""The retrieval tools as every surface sees them: scopes, rate classes, MCP annotations."""

from __future__ import annotations

import pytest
from mnemo.service.catalog import TOOLS
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE


@pytest.mark.parametrize("name", ["search_memory", "recall", "recall_context"])
def test_reads_are_read_only_idempotent_search_class_tools_needing_read(name):
    tool = TOOLS[name]

    assert (tool.read_only, tool.destructive, tool.idempotent) == (True, False, True)
    assert tool.rate_class == "search"
    assert tool.scopes == {READ, ADMIN}


def test_forget_is_a_destructive_write_class_tool_for_write_or_delete_keys():
    tool = TOOLS["forget"]

    assert (tool.read_only, tool.destructive, tool.idempotent) == (False, True, False)
    assert tool.rate_class == "write"
    assert tool.scopes == {WRITE, DELETE, ADMIN}


@pytest.mark.parametrize("name", ["search_memory", "recall", "recall_context", "memory_search"])
def test_each_read_description_points_to_its_siblings(name):
    description = TOOLS[name].description

    others = {"search_memory", "recall", "recall_context", "memory_search"} - {name}
    assert sum(other in description for other in others) >= 2
