"""Reads ``template.yaml``: which function serves which HTTP route, and the tables' key schemas.

The template is the source of truth for routing; the local server and the tests read it instead
of repeating it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form tags (!Ref, !Sub, !GetAtt …) kept as plain data."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {f"Fn::{suffix}" if suffix not in {"Ref", "Condition"} else suffix: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def default_template_path() -> Path:
    import functions

    return Path(functions.__file__).resolve().parent.parent / "template.yaml"


@cache
def load_template(path: Path | None = None) -> dict[str, Any]:
    with open(path or default_template_path(), encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_CfnLoader)  # noqa: S506 - a SafeLoader subclass


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str  # the template's logical id
    module: str  # e.g. functions.add.handler
    attribute: str  # e.g. lambda_handler
    pattern: re.Pattern[str]

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def specificity(self) -> tuple[int, int]:
        """Literal paths before parameterised ones, as API Gateway matches them."""
        return (self.path.count("{"), -len(self.path))


def _module_for(code_uri: str, handler: str) -> tuple[str, str]:
    module, _, attribute = handler.rpartition(".")
    package = ".".join(part for part in code_uri.strip("/").split("/") if part)
    return f"{package}.{module}", attribute


def http_routes(path: Path | None = None) -> list[Route]:
    template = load_template(path)
    routes: list[Route] = []
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        for event in (props.get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            method = event["Properties"]["Method"].upper()
            route_path = event["Properties"]["Path"]
            regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(route_path))
            module, attribute = _module_for(props["CodeUri"], props["Handler"])
            routes.append(Route(method, route_path, logical_id, module, attribute, re.compile(f"^{regex}$")))
    return sorted(routes, key=lambda r: r.specificity)


def match_route(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    for route in routes:
        if route.method in (method, "ANY"):
            found = route.pattern.match(path)
            if found:
                return route, found.groupdict()
    return None


def table_key_schema(logical_id: str, path: Path | None = None) -> dict[str, Any]:
    """The CreateTable arguments a test needs, straight from the template."""
    props = load_template(path)["Resources"][logical_id]["Properties"]
    out: dict[str, Any] = {
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    for indexes in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if indexes in props:
            out[indexes] = props[indexes]
    if "StreamSpecification" in props:
        out["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
    return out


def table_ttl(logical_id: str, path: Path | None = None) -> dict[str, Any] | None:
    """The table's TimeToLiveSpecification (an UpdateTimeToLive argument), if it has one."""
    ttl: dict[str, Any] | None = load_template(path)["Resources"][logical_id]["Properties"].get(
        "TimeToLiveSpecification"
    )
    return ttl
