"""Reads ``template.yaml`` for the tests: the routes it gives each function and the tables' key
schemas, which the code's own tables (``mnemo.local.routes``, ``mnemo.local.tables``) must match."""

from __future__ import annotations

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


TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


@cache
def load_template(path: Path | None = None) -> dict[str, Any]:
    with open(path or TEMPLATE, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_CfnLoader)


def template_routes(path: Path | None = None) -> dict[str, set[tuple[str, str]]]:
    """Each function's HTTP routes as the template declares them: logical id → {(method, path)}."""
    routes: dict[str, set[tuple[str, str]]] = {}
    for logical_id, resource in load_template(path)["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in (resource["Properties"].get("Events") or {}).values():
            if event.get("Type") == "HttpApi":
                props = event["Properties"]
                routes.setdefault(logical_id, set()).add((props["Method"].upper(), props["Path"]))
    return routes


def handler_module(logical_id: str, path: Path | None = None) -> str:
    """The importable module of a function's handler (``functions.write.handler``)."""
    props = load_template(path)["Resources"][logical_id]["Properties"]
    module = props["Handler"].rpartition(".")[0]
    package = ".".join(part for part in props["CodeUri"].strip("/").split("/") if part)
    return f"{package}.{module}"


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


def resolve(value: Any, refs: dict[str, Any], template: dict[str, Any]) -> Any:
    """``value`` with the intrinsic functions a function's environment uses (Ref, Join, If, Sub,
    Equals, Not, And, Or, Condition) worked out as CloudFormation would for a stack deployed with
    the parameters' defaults: ``refs`` gives resources (and any parameter a test sets); a
    CommaDelimitedList parameter is a list. A resource ``refs`` lacks is the empty string, as a
    condition that is off never reads it."""
    parameters = template.get("Parameters", {})

    def ref(name: str) -> Any:
        if name in refs:
            return refs[name]
        if name in parameters:
            default = parameters[name].get("Default", "")
            if parameters[name].get("Type") == "CommaDelimitedList":
                return str(default).split(",")
            return str(default)
        return {"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012", "AWS::NoValue": None}.get(name, "")

    def condition(name: str) -> bool:
        return bool(walk(template["Conditions"][name]))

    def walk(node: Any) -> Any:
        if not isinstance(node, dict) or len(node) != 1:
            return node
        ((fn, arg),) = node.items()
        if fn == "Ref":
            return ref(arg)
        if fn == "Condition":
            return condition(arg)
        if fn == "Fn::Join":
            sep, parts = arg
            parts = walk(parts)
            return str(sep).join(str(walk(p)) for p in (parts if isinstance(parts, list) else [parts]))
        if fn == "Fn::If":
            name, yes, no = arg
            return walk(yes if condition(name) else no)
        if fn == "Fn::Equals":
            return walk(arg[0]) == walk(arg[1])
        if fn == "Fn::Not":
            return not walk(arg[0])
        if fn == "Fn::And":
            return all(walk(a) for a in arg)
        if fn == "Fn::Or":
            return any(walk(a) for a in arg)
        if fn == "Fn::Sub":
            import re

            text = arg if isinstance(arg, str) else arg[0]
            return re.sub(r"\$\{([\w:]+)\}", lambda m: str(ref(m.group(1))), text)
        raise ValueError(f"intrinsic {fn} is not resolved here")

    return walk(value)
