"""Fixtures the unit tests share: the CLI run in-process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemo import runtime
from mnemo.local import cli


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator:
    """`mnemo ARGS…` in-process in a fresh data folder: (exit code, stdout, stderr)."""
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MNEMO_WORKSPACE", raising=False)
    monkeypatch.delenv("MNEMO_BACKEND", raising=False)
    for name in ("POWERTOOLS_TRACE_DISABLED", "POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL"):
        # the CLI sets these for its process; restore them after the test
        monkeypatch.setenv(name, os.environ.get(name, ""))
        if not os.environ[name]:
            monkeypatch.delenv(name)
    runtime.use(None)

    def invoke(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            import io

            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        try:
            code = cli.main(list(argv))
        except SystemExit as exit_:  # argparse
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    yield invoke
    if runtime._service is not None:
        runtime._service.ports.close()
    runtime.use(None)
