"""Run one *built* function the way the python3.11 Lambda runtime does, outside Lambda.

    python3.11 -I -S -B lambda_harness.py RUN.json

``-I`` ignores ``PYTHON*`` variables and the user site and keeps the script's own directory off
``sys.path``; ``-S`` skips ``site``, so no site-packages at all; ``-B`` writes no bytecode (Lambda's
code directories are read-only). ``sys.path`` then becomes the
function's code directory, the layer's ``python/`` directory and a directory holding the AWS SDK
as the runtime's ``/var/lang/lib/python3.11/site-packages`` does — Lambda's order — followed by
the standard library. Nothing else is importable, so a dependency the layer lacks fails here as
it would in Lambda.

RUN.json: ``code``, ``layer``, ``sdk`` (directories), ``function`` (its logical id),
``events`` (``[{"name", "event", "trace_id"?}]``), ``out`` (where the results go), and optionally
``init``, a statement timed after the import (the bench's measure of a first call's set-up). The handler
module is imported once (the cold start), then called once per event with a Lambda-like context;
each invocation gets its ``_X_AMZN_TRACE_ID`` as the runtime sets it. The results file holds each
response (or the escaped exception's type) with the invocation's wall and CPU time (``wall_ms``,
``cpu_ms``: Lambda bills the wall time, rounded up to the millisecond), the import's wall and CPU
time, and where every loaded top-level module came from. stdout and stderr are the function's logs, untouched.
"""

import gc
import json
import logging
import os
import sys
import sysconfig
import time
import traceback
import uuid

with open(sys.argv[1], encoding="utf-8") as fh:
    spec = json.load(fh)
roots = {"code": spec["code"], "layer": spec["layer"], "runtime-sdk": spec["sdk"]}
stdlib = [p for p in sys.path if p]  # with -I -S: only the standard library is left
sys.path[:] = [*roots.values(), *stdlib]
allowed = [*roots.values(), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]]


class Context:
    """What the runtime passes as ``context`` (the attributes Powertools reads)."""

    def __init__(self, function: str) -> None:
        self.function_name = function
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function}"
        self.memory_limit_in_mb = 512
        self.log_group_name = f"/aws/lambda/{function}"
        self.log_stream_name = "2026/12/01/[$LATEST]0123456789abcdef0123456789abcdef"
        self.aws_request_id = str(uuid.uuid4())
        self._deadline = time.monotonic() + 60

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


# The runtime gives the root logger a handler to stdout (level WARNING) before the handler module
# is imported, so a library's warnings reach the function's log as they would in Lambda.
_root = logging.StreamHandler(sys.stdout)
_root.setFormatter(logging.Formatter("[%(levelname)s]\t%(asctime)s\t%(name)s\t%(message)s"))
logging.getLogger().addHandler(_root)

wall, cpu = time.perf_counter(), time.process_time()
import handler  # noqa: E402  (Handler: handler.lambda_handler, from the code directory)

import_ms = {"wall": (time.perf_counter() - wall) * 1000, "cpu": (time.process_time() - cpu) * 1000}
collector = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}  # after the cold start
if spec.get("init"):  # bench/coldstart_built.py: what a first call adds before its own work
    wall, cpu = time.perf_counter(), time.process_time()
    exec(spec["init"], {})
    import_ms["init_wall"] = (time.perf_counter() - wall) * 1000
    import_ms["init_cpu"] = (time.process_time() - cpu) * 1000

results = []
for item in spec["events"]:
    if item.get("trace_id"):
        os.environ["_X_AMZN_TRACE_ID"] = item["trace_id"]  # the runtime sets it per invocation
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        response = handler.lambda_handler(item["event"], Context(spec["function"]))
        took = {"wall_ms": (time.perf_counter() - wall) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000}
        results.append({"name": item["name"], "response": response, **took})
    except Exception as exc:  # what the runtime would report as the invocation's error
        frames = traceback.extract_tb(exc.__traceback__)
        results.append({"name": item["name"], "error": type(exc).__name__, "where": f"{frames[-1].name}"})

collector["frozen_after_calls"] = gc.get_freeze_count()  # and what the first call built (its service)

origins: dict[str, str] = {}
outside: list[str] = []
for name, module in list(sys.modules.items()):
    path = getattr(module, "__file__", None)
    if not path or module is sys.modules["__main__"]:
        continue
    if not any(path.startswith(a) for a in allowed):
        outside.append(name)
    root = next((label for label, d in roots.items() if path.startswith(d)), None)
    if root and "." not in name:
        origins[name] = root

with open(spec["out"], "w", encoding="utf-8") as fh:
    json.dump(
        {"results": results, "import_ms": import_ms, "gc": collector, "origins": origins, "outside": sorted(outside)},
        fh,
        default=str,
    )
