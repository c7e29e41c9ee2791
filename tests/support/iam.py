"""What a function may do, read from template.yaml, and what a recorded call needs, in IAM's terms.

* :func:`function_statements` — the ``Allow`` statements of a function's role (its inline policy
  and the stack's own ``AWS::IAM::ManagedPolicy`` resources it attaches), with ``!Ref`` /
  ``!GetAtt`` / ``!Sub`` resolved against a :class:`Stack` of concrete names.
* :func:`dynamodb_needs` / :func:`opensearch_needs` — the IAM action and resource ARN one
  DynamoDB or OpenSearch request (as the recording proxy saw it) is authorised against.
  Transactions need the action of each item (``TransactWriteItems`` has no IAM action of its
  own); a ``Query`` on an index needs the index's ARN; OpenSearch's resource is the domain ARN
  followed by the request's path.
* :func:`allows` — whether the statements grant one need (``*`` / ``?`` wildcards, as IAM).

Only what this template uses is modelled: Allow statements, no conditions, no ``NotAction``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from tests.support.recording_proxy import Call
from tests.support.template import load_template

REGION = "us-east-1"
ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Need:
    action: str
    resource: str

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}"


@dataclass(frozen=True)
class Statement:
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    sid: str = ""


@dataclass
class Stack:
    """Concrete values for the template's parameters and resources."""

    tables: dict[str, str]  # logical id → table name
    domain_arn: str = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/mnemo"
    alias: str = "mnemo-memories"
    names: dict[str, str] = field(default_factory=dict)

    def table_arn(self, logical_id: str) -> str:
        return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{self.tables[logical_id]}"

    def ref(self, name: str) -> str:
        if name in self.tables:
            return self.tables[name]
        values = {
            "OpenSearchDomainArn": self.domain_arn,
            "OpenSearchIndex": self.alias,
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            **self.names,
        }
        return values[name]

    def get_att(self, logical_id: str, attribute: str) -> str:
        if attribute == "Arn" and logical_id in self.tables:
            return self.table_arn(logical_id)
        if attribute == "StreamArn" and logical_id in self.tables:
            return f"{self.table_arn(logical_id)}/stream/2026-01-01T00:00:00.000"
        if attribute == "Arn" and logical_id.endswith("LogGroup"):
            return f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/lambda/mnemo-{logical_id}:*"
        if attribute == "Arn":
            return f"arn:aws:test:{REGION}:{ACCOUNT}:{logical_id}"
        raise KeyError(f"{logical_id}.{attribute}")

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Ref"}:
            return self.ref(value["Ref"])
        if set(value) == {"Fn::GetAtt"}:
            target = value["Fn::GetAtt"]
            logical_id, attribute = target.split(".", 1) if isinstance(target, str) else target
            return self.get_att(logical_id, attribute)
        if set(value) == {"Fn::Sub"}:
            return re.sub(r"\$\{([^}]+)\}", lambda m: self._sub(m.group(1)), value["Fn::Sub"])
        return {k: self.resolve(v) for k, v in value.items()}

    def _sub(self, name: str) -> str:
        if "." in name and not name.startswith("AWS::"):
            return self.get_att(*name.split(".", 1))
        return self.ref(name)


def _as_tuple(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, list) else (value,)


#: the AWS managed policy a role gets only when the functions run in a VPC (condition InVpc)
VPC_POLICY = "AWSLambdaVPCAccessExecutionRole"


def role_of(function: str) -> str:
    """The logical id of the function's role (``Role: !GetAtt <Role>.Arn``)."""
    role = load_template()["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"]
    logical_id = (role.split(".")[0] if isinstance(role, str) else role[0]).removesuffix(".Arn")
    return str(logical_id)


def role_policies(function: str) -> tuple[list[dict[str, Any]], list[str], list[Any]]:
    """The role's inline statements, the stack's managed policies it attaches (logical ids), and
    any other managed policy entries (e.g. the conditional VPC one), unresolved."""
    props = load_template()["Resources"][role_of(function)]["Properties"]
    inline = [st for policy in props.get("Policies") or [] for st in policy["PolicyDocument"]["Statement"]]
    own, other = [], []
    for entry in props.get("ManagedPolicyArns") or []:
        (own if isinstance(entry, dict) and set(entry) == {"Ref"} else other).append(
            entry["Ref"] if isinstance(entry, dict) and set(entry) == {"Ref"} else entry
        )
    return inline, own, other


def managed_statements(logical_id: str) -> list[dict[str, Any]]:
    policy = load_template()["Resources"][logical_id]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy", logical_id
    return list(policy["Properties"]["PolicyDocument"]["Statement"])


def resolved(statements: list[dict[str, Any]], stack: Stack) -> list[Statement]:
    out: list[Statement] = []
    for st in statements:
        assert st["Effect"] == "Allow" and "Condition" not in st and "NotAction" not in st, st
        resources = tuple(stack.resolve(r) for r in _as_tuple(st["Resource"]))
        out.append(Statement(_as_tuple(st["Action"]), resources, st.get("Sid", "")))
    return out


def function_statements(function: str, stack: Stack) -> list[Statement]:
    """Every Allow statement of the function's role (inline and the stack's managed policies),
    resolved; the conditional VPC policy is left out (the tests run outside a VPC)."""
    inline, own, _ = role_policies(function)
    return resolved(inline + [st for name in own for st in managed_statements(name)], stack)


def allows(statements: list[Statement], need: Need) -> bool:
    return any(
        any(fnmatchcase(need.action, a) for a in st.actions)
        and any(fnmatchcase(need.resource, r) for r in st.resources)
        for st in statements
    )


# -- what a recorded call needs ---------------------------------------------------------------

_TRANSACT = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}


def _table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def dynamodb_needs(call: Call) -> list[Need]:
    operation = call.target.rpartition(".")[2]
    body = call.json()
    if operation == "TransactWriteItems":
        return [
            Need(f"dynamodb:{_TRANSACT[kind]}", _table_arn(spec["TableName"]))
            for item in body["TransactItems"]
            for kind, spec in item.items()
        ]
    if operation == "TransactGetItems":
        return [Need("dynamodb:GetItem", _table_arn(i["Get"]["TableName"])) for i in body["TransactItems"]]
    if operation in {"BatchWriteItem", "BatchGetItem"}:
        return [Need(f"dynamodb:{operation}", _table_arn(name)) for name in body["RequestItems"]]
    resource = _table_arn(body["TableName"])
    if body.get("IndexName"):
        resource += f"/index/{body['IndexName']}"
    return [Need(f"dynamodb:{operation}", resource)]


def opensearch_needs(call: Call, domain_arn: str) -> list[Need]:
    path = call.path.strip("/")
    return [Need(f"es:ESHttp{call.method.capitalize()}", f"{domain_arn}/{path}" if path else domain_arn)]
