"""Each function's role, as template.yaml states it, against what the built function really asks
of DynamoDB and OpenSearch in the simulated runtime (every request, seen by the recording proxies):

* nothing a function calls is missing from its role (a deploy would answer AccessDenied);
* nothing its role grants goes unused by the calls the story makes, except the grants listed in
  :data:`UNEXERCISED` with the reason no test call reaches them; and a function attaching one of
  the stack's managed OpenSearch policies makes calls that policy grants.

When a code change stops a call (e.g. writes no longer touching OpenSearch in the request), the
second check fails and names the grant to drop from the role and from docs/aws.md.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.built.conftest import BuiltStack, Run
from tests.support.iam import (
    Need,
    Stack,
    Statement,
    allows,
    dynamodb_needs,
    managed_statements,
    opensearch_needs,
    resolved,
    role_policies,
)
from tests.support.iam import function_statements as statements_of

pytestmark = [pytest.mark.slow]

FUNCTIONS = ["WriteFunction", "ReadFunction", "McpFunction", "AdminFunction", "IndexerFunction", "CleanupFunction"]

#: (function or managed policy, statement Sid, action) granted but not reached by the story, and why
UNEXERCISED = {
    ("*", "Logs", "*"): "the Lambda service writes the function's logs with the role, not the code",
    ("*", "Traces", "*"): "the Lambda service sends the X-Ray segments with the role",
    ("IndexerFunction", "ReadStream", "*"): "the event source mapping reads the stream, not the code",
    ("IndexerFunction", "ListStreams", "*"): "the event source mapping reads the stream, not the code",
    ("IndexerFunction", "OnFailure", "*"): "the event source mapping sends given-up batches to the queue",
    ("*", "Idempotency", "dynamodb:GetItem"): "Powertools reads the record when a failed claim returns no item",
    ("*", "Idempotency", "dynamodb:DeleteItem"): "Powertools deletes the claim when the add raises",
    ("IndexWritePolicy", "CreateIndex", "*/_alias/*"): "put_alias: another process created the index first",
    (
        "IndexWritePolicy",
        "UpgradeMapping",
        "*",
    ): "an index of an older layout only (tests/integration/test_aws_backend.py)",
    ("IndexWritePolicy", "MigrationWrites", "*"): "only while a mapping change runs "
    "(tests/integration/test_index_migration_aws.py)",
    ("IndexWritePolicy", "MigrationMapping", "*"): "only while a mapping change runs",
    ("IndexerFunction", "Memories", "dynamodb:PutItem"): "a repair marker for a memory TTL removed meanwhile",
    ("CleanupFunction", "Memories", "dynamodb:DeleteItem"): "clearing such a standalone repair marker",
    ("AdminFunction", "RateLimits", "dynamodb:BatchGetItem"): "limits above 15,000 a minute (sharded buckets) only",
    ("AdminFunction", "Tenants", "dynamodb:DeleteItem"): "removing an OAuth principal binding (not in the story; "
    "tests/contract/test_principals.py removes one on DynamoDB)",
}


def stack_of(built_stack: BuiltStack) -> Stack:
    return Stack(tables=built_stack.table_names(), alias=built_stack.cfg.opensearch_index)


def needs_of(run: Run, stack: Stack) -> list[Need]:
    needs = [n for call in run.dynamodb for n in dynamodb_needs(call)]
    return needs + [n for call in run.opensearch for n in opensearch_needs(call, stack.domain_arn)]


@pytest.fixture(scope="module")
def needs(built_stack: BuiltStack, built_runs: dict[str, Run]) -> dict[str, set[Need]]:
    stack = stack_of(built_stack)
    by_function: dict[str, set[Need]] = defaultdict(set)
    for run in built_stack.runs:
        by_function[run.function].update(needs_of(run, stack))
    assert set(by_function) == set(FUNCTIONS)
    return by_function


def unexercised_reason(owner: str, statement: Statement, action: str, resource: str) -> str | None:
    from fnmatch import fnmatchcase

    for (who, sid, what), reason in UNEXERCISED.items():
        if who in {"*", owner} and sid == statement.sid and (fnmatchcase(action, what) or fnmatchcase(resource, what)):
            return reason
    return None


def unused(owner: str, statements: list[Statement], used: set[Need]) -> list[str]:
    """Each (action, resource) of ``statements`` no need in ``used`` matches (and no reason excuses)."""
    from fnmatch import fnmatchcase

    out = []
    for st in statements:
        for action in st.actions:
            for resource in st.resources:
                hit = any(fnmatchcase(n.action, action) and fnmatchcase(n.resource, resource) for n in used)
                if not hit and unexercised_reason(owner, st, action, resource) is None:
                    out.append(f"{st.sid}: {action} on {resource}")
    return out


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_call_a_built_function_makes_is_granted_by_its_role(
    built_stack: BuiltStack, needs: dict[str, set[Need]], function: str
):
    granted = statements_of(function, stack_of(built_stack))

    missing = sorted(str(n) for n in needs[function] if not allows(granted, n))

    assert missing == []


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_inline_grant_of_a_role_is_used_by_its_function(
    built_stack: BuiltStack, needs: dict[str, set[Need]], function: str
):
    inline, _, _ = role_policies(function)

    assert unused(function, resolved(inline, stack_of(built_stack)), needs[function]) == []


def test_every_managed_grant_is_used_and_every_function_uses_the_policies_it_attaches(
    built_stack: BuiltStack, needs: dict[str, set[Need]]
):
    stack = stack_of(built_stack)
    attached: dict[str, list[str]] = defaultdict(list)
    for function in FUNCTIONS:
        for policy in role_policies(function)[1]:
            attached[policy].append(function)
    problems = []
    for policy, functions in sorted(attached.items()):
        statements = resolved(managed_statements(policy), stack)
        used_by_any = set().union(*(needs[f] for f in functions))
        problems += [f"{policy} {gap}" for gap in unused(policy, statements, used_by_any)]
        for function in functions:
            if not any(allows(statements, n) for n in needs[function]):
                problems.append(f"{function} attaches {policy} but makes no call it grants")

    assert problems == []
