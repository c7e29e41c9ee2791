"""moto's DynamoDB answers without its shape walk of every attribute value.

moto (5.x) serialises a response by walking the operation's output shape member by member, and
looks each member up under every alias its attribute pickers know. A DynamoDB ``AttributeValue``
is a structure of ten members (``S``, ``N``, ``B``, …, ``L``, ``M``) of which a value holds one,
so every attribute of every item returned costs ten aliased look-ups: a ``BatchGetItem`` of 96
memories took ≈ 0.25 s of moto's time on this machine, and serialising answers was four fifths of
everything moto did in the AWS concurrency tests (cProfile: 54 of 68 s in
``test_parallel_adds_are_all_stored_and_searchable_at_once[aws]``). DynamoDB itself answers in
milliseconds.

``install`` writes an ``AttributeValue`` of DynamoDB or DynamoDB Streams directly — its one member,
a blob (and each blob of a set) through the serialiser's own base64, nested maps and lists the
same way — and hands anything else (another member name, a value that is not a plain dict) to
moto's walk. Every other part of every answer is still moto's, so the JSON sent is the same;
``tests/unit/test_moto_responses.py`` holds the raw answers to moto's own.
"""

from __future__ import annotations

from typing import Any

from tests.support.moto_patch import MotoPatch

_SERVICES = frozenset({"dynamodb", "dynamodbstreams"})
_TEXT = frozenset({"S", "N"})
_TEXT_SETS = frozenset({"SS", "NS"})
_AS_IS = frozenset({"BOOL", "NULL"})


class _Unusual(Exception):
    """A value this fast path does not know: moto's walk serialises it."""


def _attribute_value(serializer: Any, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Unusual
    out: dict[str, Any] = {}
    for kind, inner in value.items():
        if inner is None:
            continue  # moto leaves out a member whose value is None
        if kind in _TEXT:
            out[kind] = str(inner) if inner not in ({}, []) else inner
        elif kind in _AS_IS:
            out[kind] = inner
        elif kind == "B":
            out[kind] = serializer._base64(inner)
        elif kind in _TEXT_SETS:
            out[kind] = [str(v) if v not in (None, {}, []) else v for v in inner]
        elif kind == "BS":
            out[kind] = [serializer._base64(v) for v in inner]
        elif kind == "M":
            out[kind] = {name: _attribute_value(serializer, v) for name, v in inner.items()}
        elif kind == "L":
            out[kind] = [_attribute_value(serializer, v) for v in inner]
        else:
            raise _Unusual
    return out


def _serialize(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
    if shape.name == "AttributeValue" and key and self.service_model.service_name in _SERVICES:
        try:
            serialized[self.get_serialized_name(shape, key)] = _attribute_value(self, value)
            return
        except _Unusual:
            pass
    _PATCH.original("_serialize")(self, serialized, value, shape, key)


_PATCH = MotoPatch("moto.core.serialize:JSONSerializer", _serialize=_serialize)
#: patch moto's JSON serialiser (idempotent); moto's own again (for the unit test's comparison)
install, uninstall = _PATCH.install, _PATCH.uninstall
