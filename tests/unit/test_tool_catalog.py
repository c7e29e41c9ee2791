"""What an agent reads about the tools at every session start: names, descriptions and input
schemas within 11.3 KB, written for an agent (no HTTP headers, statuses or scopes), the schemas
compacted without changing what they accept, and server instructions that say when to save."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from jsonschema import Draft202012Validator
from mnemo.api.routers.mcp import INSTRUCTIONS, build_catalog, compact_schema
from mnemo.service.catalog import TOOLS

#: what the tools/list answer costs a model at session start, as json.dumps writes it
#: (10 KB until the four search tools took updated_after / updated_before; 11.3 KB with recall's ``mode``;
#: issue 39's time words, ``session``, supersession and memory_history then took it to 13,178 bytes
#: under 13.2 KB. Back under 11.3 KB (10,975 bytes) by saying each argument once, where the list first
#: shows it (mcp.say_once: 1.9 KB), by not sending a default of false or "" (0.26 KB) and by
#: descriptions that no longer repeat a date-time format; no tool, argument or constraint was dropped)
BUDGET_BYTES = 11_300
HTTP_TALK = re.compile(r"X-Project|Idempotency-Key|header|HTTP|REST|\b[45]\d\d\b|memory:(read|write|delete)|contract|§")


def agent_facing() -> list[dict]:
    return [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in build_catalog()]


def test_names_descriptions_and_input_schemas_fit_in_11_3_kb():
    size = len(json.dumps(agent_facing()))

    assert size <= BUDGET_BYTES, f"{size} bytes"


def descriptions(schema: object) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for value in schema.values() for d in descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in descriptions(value)]
    return []


@pytest.mark.parametrize("tool", agent_facing(), ids=lambda t: t["name"])
def test_descriptions_speak_to_an_agent_not_of_http(tool):
    texts = [tool["description"], *descriptions(tool["inputSchema"])]

    assert [text for text in texts if HTTP_TALK.search(text)] == []


@pytest.mark.parametrize("name", list(TOOLS))
def test_each_tool_description_says_when_to_prefer_another_or_what_it_is_for(name):
    description = TOOLS[name].description
    others = set(TOOLS) - {name}
    assert len(description) >= 30
    if name in {"memory_search", "search_memory", "recall", "memory_add", "memory_delete"}:
        assert any(other in description for other in others), description


def test_the_instructions_say_what_to_save_and_to_search_before_adding():
    assert "decision" in INSTRUCTIONS and "fact" in INSTRUCTIONS
    assert "Search before you add" in INSTRUCTIONS
    assert "memory_update" in INSTRUCTIONS and "isError" in INSTRUCTIONS


PROBES = [None, "", "x", "acme/%", "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "2999-01-01T00:00:00Z", 0, 1, 60, 2.5, True,
          [], ["a"], ["a"] * 21, {}, "x" * 5000]  # fmt: skip


@pytest.mark.parametrize("name", list(TOOLS))
def test_the_compacted_input_schema_accepts_exactly_what_the_generated_one_does(name):
    generated = TOOLS[name].args_model.model_json_schema(mode="validation")
    compacted = compact_schema(generated)
    original, compact = Draft202012Validator(generated), Draft202012Validator(compacted)
    required = {key: "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV" if key in ("id", "reference") else "words"
                for key in generated.get("required", [])}  # fmt: skip
    properties = list(generated["properties"])
    checked = 0
    for prop, value in itertools.product([*properties, "unknown_argument"], PROBES):
        instance = {**required, prop: value}
        assert original.is_valid(instance) == compact.is_valid(instance), (prop, value)
        checked += 1
    assert checked == (len(properties) + 1) * len(PROBES)
    assert "title" not in json.dumps(compacted)


@pytest.mark.parametrize("name", list(TOOLS))
def test_the_compacted_output_schema_is_a_valid_schema_without_titles(name):
    compacted = compact_schema(TOOLS[name].result.model_json_schema(mode="serialization"))
    Draft202012Validator.check_schema(compacted)
    assert '"title"' not in json.dumps(compacted)


def test_a_default_is_listed_only_when_it_says_more_than_leaving_the_argument_out():
    schemas = {t["name"]: t["inputSchema"]["properties"] for t in agent_facing()}

    defaults = [prop["default"] for props in schemas.values() for prop in props.values() if "default" in prop]
    assert [d for d in defaults if d is None or d is False or d == ""] == []
    assert schemas["search_memory"]["parse_time"]["default"] is True
    assert schemas["recall"]["limit"]["default"] == 5 and schemas["recall"]["mode"]["default"] == "hybrid"
    assert schemas["recall_context"]["path_filter"]["default"] == "%"
