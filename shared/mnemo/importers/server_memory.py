"""The official MCP memory server's store (``@modelcontextprotocol/server-memory``): a JSON Lines
file (``memory.jsonl``, ``MEMORY_FILE_PATH``), one entity or relation a line:

    {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["Writes Rust", …]}
    {"type": "relation", "from": "Ada", "to": "Acme", "relationType": "works_at"}

Each observation is one memory: its text verbatim, kind the entity's ``entityType``, path the
entity's name. Each relation is one memory whose content is ``FROM RELATIONTYPE TO`` (the graph's
own words, joined by spaces), kind ``relation``, path its ``from`` entity. The file keeps no times:
the memories are dated by the import. An entity without observations carries nothing (its name
and type alone are no memory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemo.importers import Entry, Item, Problem, WrongFormat, json_lines
from mnemo.importers.split import split


def read(path: Path) -> Iterator[Entry]:
    if not path.is_file():
        raise WrongFormat(f"{path} is not a file: server-memory reads its memory.jsonl")
    graph = "the MCP memory server's JSON Lines graph"
    yield from json_lines(path, graph, lambda record, where, _: _line(record, where))


def _text(record: dict[str, Any], key: str) -> str:
    value = record[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key!r} is not a non-empty string")
    return value


def _line(record: Any, where: str) -> Iterator[Entry]:
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    kind = record.get("type")
    if kind == "entity":
        name = _text(record, "name")
        entity_type = record.get("entityType")
        observations = record["observations"]
        if not isinstance(observations, list):
            raise ValueError("'observations' is not a list")
        for index, observation in enumerate(observations):
            at = f"{where}, observation {index + 1}"
            if not isinstance(observation, str) or not observation.strip():
                yield Problem(at, "not a non-empty string")
                continue
            for part in split(observation):
                yield Item(at, part, kind=entity_type if isinstance(entity_type, str) and entity_type else None,
                           path=name)  # fmt: skip
    elif kind == "relation":
        source, target, relation = _text(record, "from"), _text(record, "to"), _text(record, "relationType")
        yield Item(where, f"{source} {relation} {target}", kind="relation", path=source)
    else:
        raise ValueError(f"'type' is {kind!r}, neither 'entity' nor 'relation'")
