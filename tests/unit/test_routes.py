"""Routing lives in one place per function: the routers its handler includes. template.yaml must
give each function exactly those routes, and the local server (``mnemo.local.routes``) and the
local tables (``mnemo.local.tables``) must agree with the template."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest
from mnemo.local.routes import HTTP_FUNCTIONS, http_routes
from mnemo.local.tables import TABLES, TTL_ATTRIBUTES
from mnemo.service.catalog import ADMIN_OPERATIONS, TOOLS

from tests.support.template import handler_module, load_template, table_key_schema, table_ttl, template_routes


def _served(function: str) -> list[tuple[str, str]]:
    return list(importlib.import_module(HTTP_FUNCTIONS[function]).app.served)


def test_the_http_functions_are_the_templates():
    template = template_routes()

    assert set(HTTP_FUNCTIONS) == set(template)
    for function, module in HTTP_FUNCTIONS.items():
        assert handler_module(function) == module


@pytest.mark.parametrize("function", sorted(HTTP_FUNCTIONS))
def test_a_function_serves_exactly_the_routes_the_template_gives_it(function):
    served = _served(function)

    assert len(served) == len(set(served)), f"{function} declares a route twice"
    assert set(served) == template_routes()[function]


def test_every_route_has_exactly_one_function():
    owners = Counter(route for function in HTTP_FUNCTIONS for route in _served(function))

    assert [route for route, count in owners.items() if count != 1] == []


def test_every_tool_and_admin_operation_is_served_by_exactly_one_function():
    routes = Counter((r.method, r.path) for r in http_routes())
    paths = {f"/v1/tools/{name}" for name in TOOLS} | {op.path for op in ADMIN_OPERATIONS.values()}

    for name in TOOLS:
        assert routes[("POST", f"/v1/tools/{name}")] == 1, name
    for op in ADMIN_OPERATIONS.values():
        assert routes[(op.method, op.path)] == 1, op.name
    literal = {path for _, path in routes if path.startswith("/v1/") and "{name}" not in path}
    assert literal == paths


def test_the_local_tables_are_the_templates():
    for logical_id, schema in TABLES.items():
        assert schema == table_key_schema(logical_id), logical_id
        ttl = table_ttl(logical_id)
        assert TTL_ATTRIBUTES.get(logical_id) == (ttl["AttributeName"] if ttl else None), logical_id
    tables = {k for k, r in load_template()["Resources"].items() if r["Type"] == "AWS::DynamoDB::Table"}
    assert set(TABLES) == tables
