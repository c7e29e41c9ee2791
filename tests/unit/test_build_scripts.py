"""The scripts ``sam build`` runs (shared/Makefile → scripts/build_layer.py → scripts/embedder_data.py)
need nothing outside the standard library: docs/aws.md's deploy steps allow a fresh clone and a
plain python3.11, where neither pydantic nor PyStemmer is installed. ``python -I -S`` is that
interpreter here: no site-packages, no environment, no current folder on the path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mnemo.embedding.static import merge_ids

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = {"model": {"vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4}, "merges": ["a b", ["ab", "c"]]}}


def stdlib_only(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_embedder_data_computes_the_merges_with_the_standard_library_only():
    done = stdlib_only(
        "import json, runpy, sys; script = runpy.run_path('scripts/embedder_data.py'); "
        f"print(script['merge_ids'](json.loads({json.dumps(json.dumps(TOKENIZER))})).hex())"
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == merge_ids(TOKENIZER).hex()  # the same bytes the embedder reads


def test_build_layer_starts_with_the_standard_library_only():
    done = stdlib_only("import runpy; runpy.run_path('scripts/build_layer.py')")

    assert done.returncode == 0, done.stderr
