"""template.yaml's roles, held to docs/aws.md ("IAM": each function's role, the OpenSearch
policies) and to the rules of least privilege that need no deployment to check. What the built
functions really call is checked against the same roles by tests/built/test_least_privilege.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mnemo.backends.aws.mapping import INDEX_VERSION
from mnemo.embedding.bedrock import MODELS

from tests.support.iam import VPC_POLICY, managed_statements, role_of, role_policies
from tests.support.template import load_template

DOC = Path(__file__).resolve().parents[2] / "docs" / "aws.md"
RESOURCES = load_template()["Resources"]
FUNCTIONS = sorted(name for name, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function")
OWN_LOG_GROUP = "its own log group"
#: the Bedrock policy (condition UsesBedrock), attached to every function that embeds texts
EMBEDDER_POLICY = "EmbedderPolicy"
#: the stream indexer only copies the vector the record carries
NO_EMBEDDING = {"IndexerFunction"}
EVERY = "every function"

Triple = tuple[str, str, str]  # (function or policy, resource, action)


def table_after(heading: str) -> list[list[str]]:
    """The rows (cells, backticks removed) of the first Markdown table after ``heading``."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            rows.append([cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"no table after {heading!r}"
    return rows[2:]  # past the header and the |---| line


def documented(heading: str) -> set[Triple]:
    """Each row as (owner, resource, action) triples; an empty owner cell continues the row above."""
    triples: set[Triple] = set()
    owner = ""
    for first, resources, actions in table_after(heading):
        owner = first or owner
        for resource in resources.split(", "):
            resource = OWN_LOG_GROUP if resource.startswith(OWN_LOG_GROUP) else resource
            resource = "*" if resource.startswith("* ") else resource
            triples.update((owner, resource, action) for action in actions.split(", "))
    return triples


def symbol(resource: Any, function: str | None = None) -> str:
    """A template resource as docs/aws.md names it."""
    if resource == "*":
        return "*"
    if "Fn::GetAtt" in resource:
        target = resource["Fn::GetAtt"]
        logical_id, attribute = target.split(".", 1) if isinstance(target, str) else target
        if function is not None and logical_id == f"{function}LogGroup":
            return OWN_LOG_GROUP
        return f"{logical_id} stream" if attribute == "StreamArn" else str(logical_id)
    text = resource["Fn::Sub"]
    text = text.replace("${OpenSearchDomainArn}/", "").replace("${OpenSearchIndex}", "<alias>")
    return re.sub(r"\$\{(\w+)\.Arn\}", r"\1", text)


def actions_of(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def resources_of(statement: dict[str, Any]) -> list[Any]:
    resource = statement["Resource"]
    return resource if isinstance(resource, list) else [resource]


def templated_roles() -> set[Triple]:
    triples: set[Triple] = set()
    for function in FUNCTIONS:
        inline, managed, _ = role_policies(function)
        for st in inline:
            for resource in resources_of(st):
                triples.update((function, symbol(resource, function), a) for a in actions_of(st))
        triples.update((function, "OpenSearch", name) for name in managed)
    return triples


def test_each_functions_role_is_the_documented_one():
    rows = documented("### Each function's role")
    expanded = {(f, r, a) for owner, r, a in rows for f in (FUNCTIONS if owner == EVERY else [owner])}

    assert templated_roles() == expanded


def test_the_opensearch_policies_are_the_documented_ones():
    policies = {name for name, r in RESOURCES.items() if r["Type"] == "AWS::IAM::ManagedPolicy"} - {EMBEDDER_POLICY}
    templated = {
        (name, symbol(resource), action)
        for name in policies
        for st in managed_statements(name)
        for resource in resources_of(st)
        for action in actions_of(st)
    }

    assert templated == documented("### The OpenSearch policies")


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_function_has_its_own_role_for_lambda_only_and_no_sam_policy_templates(function):
    props = RESOURCES[function]["Properties"]
    role = RESOURCES[role_of(function)]

    assert "Policies" not in props
    assert role["Type"] == "AWS::IAM::Role"
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust == {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    assert props["LoggingConfig"]["LogGroup"] == {"Ref": f"{function}LogGroup"}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_only_aws_managed_policy_is_the_vpc_one_and_only_in_a_vpc(function):
    _, _, other = role_policies(function)
    (vpc,) = [entry for entry in other if entry["Fn::If"][0] == "InVpc"]

    _, arn, otherwise = vpc["Fn::If"]
    assert arn["Fn::Sub"].endswith(f"service-role/{VPC_POLICY}")
    assert otherwise == {"Ref": "AWS::NoValue"}
    assert [entry for entry in other if entry is not vpc] == (
        []
        if function in NO_EMBEDDING
        else [{"Fn::If": ["UsesBedrock", {"Ref": EMBEDDER_POLICY}, {"Ref": "AWS::NoValue"}]}]
    )


def test_bedrock_is_granted_only_with_embedder_bedrock_and_only_on_the_chosen_model():
    policy = RESOURCES[EMBEDDER_POLICY]
    (statement,) = managed_statements(EMBEDDER_POLICY)

    assert policy["Condition"] == "UsesBedrock"
    assert load_template()["Conditions"]["UsesBedrock"] == {"Fn::Equals": [{"Ref": "Embedder"}, "bedrock"]}
    assert actions_of(statement) == ["bedrock:InvokeModel"]
    assert resources_of(statement) == [
        {"Fn::Sub": "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${BedrockModel}"}
    ]
    assert load_template()["Parameters"]["BedrockModel"]["AllowedValues"] == list(MODELS)


def test_the_functions_embed_with_the_embedder_the_parameters_choose():
    variables = load_template()["Globals"]["Function"]["Environment"]["Variables"]

    assert variables["MNEMO_EMBEDDER"] == {"Ref": "Embedder"}
    assert variables["MNEMO_BEDROCK_MODEL"] == {"Ref": "BedrockModel"}


def all_statements() -> list[dict[str, Any]]:
    found = [st for f in FUNCTIONS for st in role_policies(f)[0]]
    return found + [
        st for name, r in RESOURCES.items() if r["Type"] == "AWS::IAM::ManagedPolicy" for st in managed_statements(name)
    ]


def test_no_wildcard_action_and_no_wildcard_resource_but_for_xray():
    for st in all_statements():
        assert st["Effect"] == "Allow" and "Condition" not in st, st
        assert all("*" not in a for a in actions_of(st)), st
        if "*" in resources_of(st):
            assert all(a.startswith("xray:") for a in actions_of(st)), st


def test_opensearch_is_granted_only_on_paths_under_the_alias():
    granted = [r for st in all_statements() if actions_of(st)[0].startswith("es:") for r in resources_of(st)]

    assert granted
    for resource in granted:
        assert resource["Fn::Sub"].startswith("${OpenSearchDomainArn}/${OpenSearchIndex}"), resource


def test_the_read_function_can_only_search_the_index():
    _, managed, _ = role_policies("ReadFunction")
    statements = [st for name in managed for st in managed_statements(name)]

    assert {(symbol(r), a) for st in statements for r in resources_of(st) for a in actions_of(st)} == {
        ("<alias>/_search", "es:ESHttpPost")
    }


def test_the_index_the_policies_let_the_functions_create_is_the_one_the_code_creates():
    (create,) = [st for st in managed_statements("IndexWritePolicy") if st["Sid"] == "CreateIndex"]

    assert {symbol(r) for r in resources_of(create)} == {
        f"<alias>-{INDEX_VERSION}",
        f"<alias>-{INDEX_VERSION}/_alias/<alias>",
    }


def test_every_role_that_calls_opensearch_is_listed_for_the_domain_policy():
    listed = load_template()["Outputs"]["OpenSearchRoleArns"]["Value"]["Fn::Join"][1]
    listed_roles = {entry["Fn::GetAtt"].removesuffix(".Arn") for entry in listed}

    callers = {role_of(f) for f in FUNCTIONS if role_policies(f)[1]}
    assert callers <= listed_roles
