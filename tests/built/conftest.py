"""The deployable artifacts, tested as built: ``sam build`` of the real template in a temporary
directory, then every built function run in a simulated python3.11 runtime
(``tests/support/lambda_harness.py``: ``python -I -S``, only the function's code, the built layer
and a runtime-like AWS SDK on ``sys.path``, the template's environment, a sampled trace id)
against moto in server mode and the session's real OpenSearch node.

Both engines sit behind a recording proxy (``tests/support/recording_proxy.py``), so the tests
see every DynamoDB and OpenSearch request each function makes without touching the process;
X-Ray segments go to a local UDP listener (``tests/support/xray.py``). One session fixture,
``built_runs``, plays the whole story once (samples, extra calls that reach every code path that
needs a permission, an OpenSearch that refuses the role, the stream, the cleanup that repairs),
and the tests read what it recorded.

aws-sam-cli lives in its own venv (``make test`` creates ``.cache/sam-venv`` and passes
``MNEMO_SAM``): its pins conflict with constraints.txt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.support import events as samples
from tests.support.recording_proxy import Call, RecordingProxy, Refusal
from tests.support.sam import ROOT, SamBuildError, find_sam, install_sdk
from tests.support.sam import runtime_sdk as make_runtime_sdk
from tests.support.sam import sam_build as build_with_sam
from tests.support.template import load_template, resolve
from tests.support.xray import XRayListener

HARNESS = ROOT / "tests" / "support" / "lambda_harness.py"
#: the key every file in events/ carries
EVENTS_KEY = "test-events-key-0123456789"
#: the credentials the simulated runtime hands the functions (Lambda passes the role's session)
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "ASIAMNEMOTESTKEYID01",
    "AWS_SECRET_ACCESS_KEY": "mnemo-test-secret-access-key-0123456789ab",
    "AWS_SESSION_TOKEN": "mnemo-test-session-token-0123456789abcdef",
}
REGION = "us-east-1"
#: what a domain with fine-grained access control answers a role it does not map
FORBIDDEN = Refusal(
    403,
    {
        "error": {
            "root_cause": [{"type": "security_exception", "reason": "no permissions for [indices:data/write/index]"}],
            "type": "security_exception",
            "reason": "no permissions for [indices:data/write/index] and User [name=arn:aws:iam::123456789012:role/x]",
        },
        "status": 403,
    },
)


def sam_executable() -> str:
    found = find_sam()
    if not found:
        message = "SKIPPING built-artifact tests: aws-sam-cli not found (`make test` installs it and sets MNEMO_SAM)"
        if os.environ.get("MNEMO_REQUIRE_OPENSEARCH") == "1":
            pytest.fail(message, pytrace=False)
        print(f"\n*** {message}", file=sys.stderr)
        pytest.skip(message)
    assert os.access(found, os.X_OK), f"MNEMO_SAM={found} is not executable"
    return found


def sam_build(sam: str, out: Path, arch: str, *resources: str) -> Path:
    """``sam build`` of template.yaml for ``arch`` into ``out`` (tests/support/sam.py)."""
    try:
        return build_with_sam(sam, out, arch, *resources)
    except SamBuildError as exc:
        pytest.fail(str(exc), pytrace=False)


#: the oldest SDK pyproject.toml allows; the runtime's copy lags PyPI, so the layer must work with it
FLOOR_SDK = ("boto3==1.35.0", "botocore==1.35.0", "s3transfer==0.10.4")


class Builds:
    """The session's artifacts, each built once in a worker thread, side by side (:func:`builds`)."""

    def __init__(self, pool: ThreadPoolExecutor, jobs: dict[str, Callable[[], Path]]) -> None:
        self.pool = pool
        self.jobs = jobs
        self.started: dict[str, Future[Path]] = {}

    def start(self, name: str) -> None:
        if name not in self.started:
            self.started[name] = self.pool.submit(self.jobs[name])

    def get(self, name: str) -> Path:
        """The artifact, once built (its build's failure raised here)."""
        self.start(name)
        return self.started[name].result()


@pytest.fixture(scope="session")
def builds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Builds]:
    """Every artifact a collected test uses, started at once, two at a time: the x86_64 build, the
    arm64 layer, the runtime's SDK, the oldest SDK allowed. Each is one ``sam build`` or pip
    process, mostly one busy core (pip reads the index's file lists), so on a 2-core machine two
    take about the time of one; the first test to need an artifact waits for it alone."""
    needed = set().union(*(item.fixturenames for item in request.session.items))
    sam = sam_executable() if needed & {"built", "arm64_layer"} else ""
    folders = {name: tmp_path_factory.mktemp(name) for name in ("sam-x86_64", "sam-arm64", "runtime-sdk", "floor-sdk")}
    jobs: dict[str, Callable[[], Path]] = {
        "built": partial(sam_build, sam, folders["sam-x86_64"] / "build", "x86_64"),
        "arm64_layer": partial(sam_build, sam, folders["sam-arm64"] / "build", "arm64", "SharedLayer"),
        "runtime_sdk": partial(make_runtime_sdk, folders["runtime-sdk"]),
        "floor_sdk": partial(install_sdk, folders["floor-sdk"], *FLOOR_SDK, "--no-deps", constraints=False),
    }
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="build")
    prepared = Builds(pool, jobs)
    for name in jobs:  # in the order the tests need them
        if name in needed:
            prepared.start(name)
    yield prepared
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def built(builds: Builds) -> Path:
    """The x86_64 build (this machine's architecture, so its wheels can be imported here)."""
    return builds.get("built")


@pytest.fixture(scope="session")
def runtime_sdk(builds: Builds) -> Path:
    """boto3, botocore and s3transfer with their dependencies, as the python3.11 runtime keeps them
    in /var/lang/lib/python3.11/site-packages (the versions of constraints.txt)."""
    return builds.get("runtime_sdk")


@pytest.fixture(scope="session")
def floor_sdk(builds: Builds) -> Path:
    return builds.get("floor_sdk")


# -- the stack and the simulated runtime --------------------------------------------------------


def new_trace_id() -> tuple[str, str]:
    """A sampled ``_X_AMZN_TRACE_ID`` as Lambda sets it, and its root."""
    root = f"1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]}"
    return f"Root={root};Parent={uuid.uuid4().hex[:16]};Sampled=1", root


@dataclass
class Run:
    """One process of one function: the cold start and the events it was invoked with."""

    function: str
    names: list[str]
    results: dict[str, dict[str, Any]]
    import_ms: dict[str, float]
    gc: dict[str, Any]  # the garbage collector's state after the import
    origins: dict[str, str]
    outside: list[str]
    logs: str
    dynamodb: list[Call]
    opensearch: list[Call]
    traces: dict[str, str]  # event name → trace root

    def response(self, name: str) -> dict[str, Any]:
        result = self.results[name]
        assert "response" in result, f"{self.function} {name} raised {result}"
        response: dict[str, Any] = result["response"]
        return response

    def status(self, name: str) -> int:
        return int(self.response(name)["statusCode"])

    def body(self, name: str) -> Any:
        return json.loads(self.response(name)["body"])


@dataclass
class BuiltStack:
    build: Path
    sdk: Path
    cfg: Any  # mnemo.config.Settings of this stack's own tables and alias
    backend: Any  # an AwsBackend on them, for seeding and checking (not through the proxies)
    dynamodb: RecordingProxy
    opensearch: RecordingProxy
    xray: XRayListener
    workdir: Path
    runs: list[Run] = field(default_factory=list)
    #: what the story observed between runs (e.g. an item's repair mark before cleanup cleared it)
    facts: dict[str, Any] = field(default_factory=dict)

    def table_names(self) -> dict[str, str]:
        return self.backend.tables.by_logical_id()

    def environment(self, function: str, parameters: dict[str, str] | None = None) -> dict[str, str]:
        """What Lambda would give ``function``: the template's variables (Globals, then the
        function's own) with their references resolved to this stack deployed with ``parameters``
        (else the defaults), and the runtime's own."""
        refs = {
            **(parameters or {}),
            **self.table_names(),
            "OpenSearchEndpoint": self.opensearch.url,
            "OpenSearchIndex": self.cfg.opensearch_index,
        }
        template = load_template()
        variables: dict[str, Any] = {
            **template["Globals"]["Function"]["Environment"]["Variables"],
            **template["Resources"][function]["Properties"].get("Environment", {}).get("Variables", {}),
        }
        env = {k: str(resolve(v, refs, template)) for k, v in variables.items()}
        code = str(self.build / function)
        env.update(
            {
                # the python3.11 runtime's own variables
                "AWS_LAMBDA_FUNCTION_NAME": function,
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function}",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
                "AWS_REGION": REGION,
                "AWS_DEFAULT_REGION": REGION,
                "LAMBDA_TASK_ROOT": code,
                "LAMBDA_RUNTIME_DIR": code,
                "_HANDLER": "handler.lambda_handler",
                "TZ": ":UTC",
                "LANG": "en_US.UTF-8",
                "PATH": "/usr/local/bin:/usr/bin/:/bin",
                "HOME": str(self.workdir),  # no ~/.aws of the developer's
                "AWS_XRAY_DAEMON_ADDRESS": self.xray.address,
                "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
                **CREDENTIALS,
                # the only departures from a deployed stack: local endpoints, a quick refresh
                "MNEMO_DYNAMODB_ENDPOINT_URL": self.dynamodb.url,
                "MNEMO_OPENSEARCH_REFRESH_INTERVAL": "10ms",
            }
        )
        return env

    def run(
        self,
        function: str,
        invocations: list[tuple[str, dict[str, Any]]],
        *,
        sdk: Path | None = None,
        refusal: Refusal | None = None,
        parameters: dict[str, str] | None = None,
    ) -> Run:
        spec_path = self.workdir / f"spec-{len(self.runs)}.json"
        out_path = self.workdir / f"out-{len(self.runs)}.json"
        traces = {}
        items = []
        for name, event in invocations:
            header, root = new_trace_id()
            traces[name] = root
            items.append({"name": name, "event": event, "trace_id": header})
        spec = {
            "code": str(self.build / function),
            "layer": str(self.build / "SharedLayer" / "python"),
            "sdk": str(sdk or self.sdk),
            "function": function,
            "events": items,
            "out": str(out_path),
        }
        spec_path.write_text(json.dumps(spec))
        label = f"{function}#{len(self.runs)}"
        self.dynamodb.label = self.opensearch.label = label
        self.opensearch.refusal = refusal
        try:
            proc = subprocess.run(
                # -B: Lambda's code directories are read-only, nothing can write a pyc there
                [sys.executable, "-I", "-S", "-B", str(HARNESS), str(spec_path)],
                env=self.environment(function, parameters),
                cwd=self.workdir,
                capture_output=True,
                text=True,
                timeout=180,
            )
        finally:
            self.opensearch.refusal = None
        assert proc.returncode == 0 and out_path.exists(), f"{function}: {proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        self.xray.settle()
        out = json.loads(out_path.read_text())
        run = Run(
            function=function,
            names=[name for name, _ in invocations],
            results={r["name"]: r for r in out["results"]},
            import_ms=out["import_ms"],
            gc=out["gc"],
            origins=out["origins"],
            outside=out["outside"],
            logs=proc.stdout + proc.stderr,
            dynamodb=self.dynamodb.of(label),
            opensearch=self.opensearch.of(label),
            traces=traces,
        )
        self.runs.append(run)
        return run


@pytest.fixture(scope="session")
def built_stack(
    built: Path, runtime_sdk: Path, aws_stack: Any, opensearch_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BuiltStack]:
    """Tables and an alias of its own on the session's moto server and OpenSearch node, the
    events' API key in them, and the proxies and X-Ray listener the functions are pointed at."""
    from mnemo.backends.aws import AwsBackend, Tables
    from mnemo.backends.aws.clients import dynamodb_client
    from mnemo.local.tables import create_tables
    from mnemo.service import tenancy

    from tests.support.aws_stack import aws_settings

    cfg = aws_settings(aws_stack.dynamodb_endpoint_url, opensearch_url)
    create_tables(dynamodb_client(cfg), Tables.from_settings(cfg).by_logical_id())
    backend = AwsBackend.from_settings(cfg)
    tenancy.bootstrap(backend, plain_key=EVENTS_KEY)
    with (
        RecordingProxy(aws_stack.dynamodb_endpoint_url) as dynamodb,
        RecordingProxy(opensearch_url) as opensearch,
        XRayListener() as xray,
    ):
        yield BuiltStack(built, runtime_sdk, cfg, backend, dynamodb, opensearch, xray, tmp_path_factory.mktemp("runs"))
    backend.index.client.indices.delete(index=f"{cfg.opensearch_index}-*", ignore_unavailable=True)
    backend.close()


# -- the story, played once -------------------------------------------------------------------


#: content the extra calls write, so the leak checks have more than the samples to look for
OUTAGE_CONTENT = "Staging bucket rotates credentials at dawn; page the on-call before touching it."
IDEMPOTENT_CONTENT = "Quarterly review moved to the second Tuesday, room Aurora."


def _sample(name: str) -> tuple[str, dict[str, Any]]:
    return name, samples.load(name)


def _seed_cleanup_work(stack: BuiltStack) -> None:
    """Give the cleanup run one of each kind of work, so every permission it needs is exercised:
    an expired record with a kept version (delete from store and index, erase its history), an
    old delete tombstone (purge), and an index entry whose record is gone (make it unsearchable)."""
    from mnemo.backends.aws.items import memory_pk
    from mnemo.backends.aws.mapping import doc_id
    from mnemo.models.common import format_ts, utc_now
    from mnemo.models.records import MemoryRecord
    from mnemo.ports import Scope

    from tests.support.records import memory_record

    backend = stack.backend
    workspace = backend.tenants.list_workspaces()[0]
    project = backend.tenants.get_project(workspace.id, "default")
    scope = Scope(workspace.id, project.id)
    now = utc_now()

    def record(content: str, **extra: Any) -> MemoryRecord:
        return memory_record(content, scope=scope, at=now - timedelta(hours=2), source="seed", **extra)

    expired = record("expired note", expires_at=now - timedelta(hours=1), version=2)
    backend.store.create(expired)
    # a version its update kept: expiry erases it with the memory
    backend.store.keep_version(expired.model_copy(update={"content": "expired draft", "version": 1}), expires_at=None)
    stack.facts["expired_memory"] = {"pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}, "id": expired.id}
    backend.index.upsert(expired)
    orphan = record("an index entry whose record is gone")
    backend.index.upsert(orphan)
    gone = record("deleted long ago")
    backend.index.remove(gone)
    old = format_ts(now - timedelta(hours=1))
    backend.index.client.update(
        index=backend.index.alias,
        id=doc_id(project.id, gone.id),
        routing=project.id,
        body={"doc": {"deleted_at": old}},
        refresh="true",
    )
    assert backend.store.get(scope, orphan.id) is None


def _mcp_call(tool: str, arguments: dict[str, Any], request_id: int) -> dict[str, Any]:
    """A ``tools/call`` of the 2026-07-28 sample with another tool and arguments."""
    call = json.loads(samples.load("mcp_tools_call.json")["body"])
    call["id"] = request_id
    call["params"].update({"name": tool, "arguments": arguments})
    return samples.http_event("mcp_tools_call.json", body=call, headers={"mcp-name": tool})


def _route(
    base: str, method: str, path: str, parameters: dict[str, str] | None = None, *, body: Any = None
) -> dict[str, Any]:
    """A sample HTTP event sent to another route of the template (same key and headers)."""
    event = samples.http_event(base, path=path, body=body)
    template_path = path if not parameters else path.rsplit("/", 1)[0] + "/{" + next(iter(parameters)) + "}"
    event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {template_path}"
    event["requestContext"]["http"]["method"] = method
    if parameters:
        event["pathParameters"] = parameters
    return event


def _poison_stream_event() -> dict[str, Any]:
    """The stream sample with every image made unreadable (no ``created_at``) around content that
    must not leak: every record fails, so the whole batch fails and its error escapes the handler."""
    event = samples.load("dynamodb_stream.json")
    for record in event["Records"]:
        for image in ("NewImage", "OldImage"):
            if image in record["dynamodb"]:
                record["dynamodb"][image].pop("created_at", None)
                record["dynamodb"][image]["content"] = {"S": POISON_CONTENT}
    return event


def _raw_item(stack: BuiltStack, memory: dict[str, Any]) -> dict[str, Any]:
    from mnemo.backends.aws.items import memory_key
    from mnemo.ports import Scope

    workspace = stack.backend.tenants.list_workspaces()[0]
    project = stack.backend.tenants.get_project(workspace.id, "default")
    key = memory_key(Scope(workspace.id, project.id), memory["id"])
    item: dict[str, Any] = stack.backend.dynamodb.get_item(
        TableName=stack.cfg.memories_table, Key=key, ConsistentRead=True
    ).get("Item", {})
    return item


def _stream_batch(stack: BuiltStack) -> list[dict[str, Any]]:
    """Every record of the stack's memories table's stream not read yet, shaped as Lambda's event
    source mapping delivers them (``mnemo.local.stream.StreamMapping``, its filter included)."""
    from mnemo.local.stream import StreamMapping, clients

    mapping = stack.facts.get("stream_mapping")
    if mapping is None:
        dynamodb, streams = clients(stack.cfg)
        mapping = StreamMapping(dynamodb, streams, stack.cfg.memories_table, lambda event, context: None)
        stack.facts["stream_mapping"] = mapping
    batches: list[dict[str, Any]] = []
    mapping.handler = lambda event, context: batches.append(event)
    mapping.drain()
    return [record for event in batches for record in event["Records"]]


def _stream_memory_id(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["Keys"]["sk"]["S"]).removeprefix("MEM#")


#: content written only by the poison stream batch
POISON_CONTENT = "Poisoned record: the vault combination is 31-7-42."


@pytest.fixture(scope="session")
def built_runs(built_stack: BuiltStack) -> dict[str, Run]:
    """Every function, every sample event of events/ (in an order where reads find the writes),
    plus the calls that reach the rest of each function's permissions:

    * ``write``: the samples; a REST add with an ``Idempotency-Key``, twice (the second replays);
      then (``write-2``) an update and a delete of a memory it added.
    * ``read``: the samples; a get of an added memory, whoami, a project export, the console page
      and one of its files (package data of the layer).
    * ``mcp``: the samples; search, recent listing, get, update and delete through ``tools/call``.
    * ``admin``: the samples; a project create; then (``admin-2``) the revocation of the key it created.
    * ``write-403`` / ``read-403`` / ``mcp-403``: an OpenSearch that answers every request with 403
      (a write's similar search is refused and the write succeeds; a search answers 503).
    * ``indexer-403``: the stream records of the two adds made meanwhile, to an indexer OpenSearch
      refuses (it marks them for repair).
    * ``indexer``: the stream sample, the rest of the table's real stream so far (every write of
      the story), then a batch whose every record is unreadable.
    * ``cleanup`` (with seeded work: an expired record, an old tombstone, an orphan entry); then
      ``read-after-repair`` searches for the memory written while OpenSearch refused.
    """
    stack = built_stack
    by_function = samples.samples_by_function()
    runs: dict[str, Run] = {}

    idem = samples.http_event(
        "memory_add.json", body={"content": IDEMPOTENT_CONTENT}, headers={"idempotency-key": "built-idem-0001"}
    )
    writes = [_sample(n) for n in by_function["WriteFunction"]] + [("add_idempotent", idem), ("replay", idem)]
    runs["write"] = stack.run("WriteFunction", writes)
    chinese = runs["write"].body("memory_add_chinese.json")["memory"]["id"]
    update = samples.http_event("memory_update_unknown.json", body={"id": chinese, "content": "新的内容"})
    delete = samples.http_event("memory_delete_unknown.json", body={"id": chinese})
    runs["write-2"] = stack.run("WriteFunction", [("update_added", update), ("delete_updated", delete)])

    added = runs["write"].body("memory_add.json")["memory"]["id"]
    get = samples.http_event("memory_get_unknown.json", body={"id": added})
    reads = [_sample(n) for n in by_function["ReadFunction"]] + [("get_added", get)]
    reads += [
        ("whoami", _route("healthz.json", "GET", "/v1/whoami")),
        ("export", _route("memory_search.json", "POST", "/v1/admin/export", body={"project": "default"})),
        ("console", _route("healthz.json", "GET", "/console")),
        ("console_asset", _route("healthz.json", "GET", "/console/app.js", {"asset": "app.js"})),
    ]
    runs["read"] = stack.run("ReadFunction", reads)

    mcp = [_sample(n) for n in by_function["McpFunction"]]
    mcp.append(("mcp_search", _mcp_call("memory_search", {"q": "fridays"}, 10)))
    mcp.append(("mcp_recent", _mcp_call("memory_search", {"q": ""}, 11)))
    runs["mcp"] = stack.run("McpFunction", mcp)
    structured = json.loads(runs["mcp"].response("mcp_tools_call.json")["body"])["result"]["structuredContent"]
    mcp_id = structured["memory"]["id"]
    runs["mcp-2"] = stack.run(
        "McpFunction",
        [
            ("mcp_get", _mcp_call("memory_get", {"id": mcp_id}, 12)),
            ("mcp_update", _mcp_call("memory_update", {"id": mcp_id, "tags": ["deploy", "policy"]}, 13)),
            ("mcp_delete", _mcp_call("memory_delete", {"id": mcp_id}, 14)),
        ],
    )

    project = _route(
        "admin_key_create.json", "POST", "/v1/admin/projects", body={"slug": "built-proj", "name": "Built"}
    )
    admin = [_sample(n) for n in by_function["AdminFunction"]] + [("project_create", project)]
    runs["admin"] = stack.run("AdminFunction", admin)
    created_key = runs["admin"].body("admin_key_create.json")["key"]["id"]
    revoke = samples.http_event("admin_key_revoke_unknown.json", path=f"/v1/admin/keys/{created_key}/revoke")
    revoke["pathParameters"] = {"key_id": created_key}
    runs["admin-2"] = stack.run("AdminFunction", [("revoke_created", revoke)])

    # OpenSearch refuses the role: writes succeed (their similar lists nothing), a search answers 503
    outage_add = samples.http_event("memory_add.json", body={"content": OUTAGE_CONTENT, "tags": ["outage"]})
    runs["write-403"] = stack.run("WriteFunction", [("add_refused", outage_add)], refusal=FORBIDDEN)
    refused = runs["write-403"].body("add_refused").get("memory") or {}
    outage_search = samples.http_event("memory_search.json", body={"q": "staging bucket"})
    outage_get = samples.http_event("memory_get_unknown.json", body={"id": refused.get("id", added)})
    runs["read-403"] = stack.run(
        "ReadFunction", [("search_refused", outage_search), ("get_refused", outage_get)], refusal=FORBIDDEN
    )
    mcp_refused = _mcp_call("memory_add", {"content": OUTAGE_CONTENT + " (via MCP)"}, 20)
    runs["mcp-403"] = stack.run("McpFunction", [("mcp_add_refused", mcp_refused)], refusal=FORBIDDEN)
    mcp_refused_id = json.loads(runs["mcp-403"].response("mcp_add_refused")["body"])["result"]["structuredContent"]
    outage_ids = {refused.get("id"), mcp_refused_id["memory"]["id"]}

    # The table's stream so far, as the event source mapping delivers it: the outage's two adds to an
    # indexer OpenSearch refuses (it marks them for repair), everything else to one it accepts
    stream = _stream_batch(stack)
    refused_records = [r for r in stream if _stream_memory_id(r) in outage_ids]
    rest = [r for r in stream if _stream_memory_id(r) not in outage_ids]
    stack.facts["stream_events"] = sorted({r["eventName"] for r in rest})
    runs["indexer-403"] = stack.run(
        "IndexerFunction", [("stream_refused", {"Records": refused_records})], refusal=FORBIDDEN
    )
    if refused:
        stack.facts["refused_item"] = _raw_item(stack, refused)

    indexer = [_sample(n) for n in by_function["IndexerFunction"]]
    indexer += [("stream", {"Records": rest}), ("poison_stream", _poison_stream_event())]
    runs["indexer"] = stack.run("IndexerFunction", indexer)
    _seed_cleanup_work(stack)
    runs["cleanup"] = stack.run("CleanupFunction", [_sample(n) for n in by_function["CleanupFunction"]])
    runs["read-after-repair"] = stack.run("ReadFunction", [("search_repaired", outage_search)])
    return runs
