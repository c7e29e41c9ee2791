"""Cost per call on AWS: DynamoDB and OpenSearch requests per tool, priced per million calls.

Needs the AWS backend (``mnemo.backends.aws``). Until it exists this module reports itself as
not run, with the reason, so the results file says so instead of staying silent.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def available() -> bool:
    return importlib.util.find_spec("mnemo.backends.aws") is not None


def run() -> dict[str, Any]:
    if not available():
        return {
            "status": "not run",
            "reason": "the AWS backend (mnemo.backends.aws) is not on this branch yet",
        }
    return {"status": "not run", "reason": "request counting against moto + OpenSearch is not written yet"}
