"""What the CLI prints and how it exits: plain text or JSON, one message per failure, the
documented exit codes (``mnemo.local.cli``)."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that cannot run as given (exit 2)."""


class Console:
    """Where a command's output goes: plain text for people, or JSON for scripts."""

    def __init__(self, as_json: bool, out: IO[str] | None = None, err: IO[str] | None = None) -> None:
        self.as_json = as_json
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def result(self, payload: Any, text: str) -> None:
        if self.as_json:
            self.out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        else:
            self.out.write(text + ("\n" if text and not text.endswith("\n") else ""))

    def note(self, text: str) -> None:
        """A message for people (stderr); silent with --json."""
        if not self.as_json:
            self.err.write(text + "\n")

    def error(self, message: str, code: str) -> None:
        if self.as_json:
            self.err.write(json.dumps({"message": message, "code": code}, ensure_ascii=False) + "\n")
        else:
            self.err.write(f"mnemo: error: {message}\n")


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def command_prefix(args: argparse.Namespace) -> str:
    """The command a user types to run ``mnemo`` again as they just did, for hints: ``mnemo`` when
    that is on PATH, else the path they ran (``.venv/bin/mnemo``) or ``python -m mnemo.local.cli``;
    with the --backend and --data-dir they gave."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "mnemo":
        on_path = shutil.which("mnemo")
        same = on_path is not None and Path(on_path).resolve() == Path(argv0).resolve()
        words = ["mnemo" if same else argv0]
    else:
        words = [sys.executable, "-m", "mnemo.local.cli"]
    if getattr(args, "backend", None):
        words += ["--backend", args.backend]
    if getattr(args, "data_dir", None):
        words += ["--data-dir", args.data_dir]
    return shlex.join(words)


def missing_aws_extra() -> str | None:
    """What to install when the AWS backend's packages (the ``aws`` extra) are missing, else None:
    ``make run`` installs only what the SQLite server uses."""
    try:
        import opensearchpy  # noqa: F401 - only whether it imports
    except ImportError:
        return (
            "the AWS backend needs the `aws` extra, which `make run` does not install: "
            "run `make install` in this checkout, or `pip install -e '.[aws]'` (`mnemo[aws]` for an installed wheel)"
        )
    return None


def settings_error(exc: Any) -> str:
    """A pydantic ValidationError of the settings as one line naming the environment variable."""
    first = exc.errors(include_url=False)[0]
    name = "MNEMO_" + "_".join(str(part) for part in first["loc"]).upper()
    if first["type"] == "value_error":  # a validator's own sentence: "MNEMO_PORT must be a port number, …"
        return f"{name} {first['ctx']['error']}"
    return f"{name}: {first['msg']}"


def explained(error: Any) -> Any:
    """A validation error with its first detail in the message (the CLI shows no details)."""
    from mnemo.errors import InvalidRequest

    details = error.details or []
    if details:
        first = details[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        return InvalidRequest(f"{where}: {first['msg']}")
    return error


def run_admin(func: Callable[[argparse.Namespace, Console], int]) -> Callable[[argparse.Namespace], int]:
    """Runs one administration command; every failure becomes a message and an exit code."""

    def run(args: argparse.Namespace) -> int:
        from mnemo.errors import MnemoError, Unavailable

        console = Console(args.json)
        try:
            return func(args, console)
        except UsageError as exc:
            console.error(str(exc), "usage")
            return EXIT_USAGE
        except Unavailable as exc:  # the operator may see the cause; API callers never do
            console.error(f"{exc.message} ({exc.cause})" if exc.cause else exc.message, exc.code)
            return EXIT_UNAVAILABLE
        except MnemoError as exc:
            console.error(exc.message, exc.code)
            return EXIT_ERROR
        except OSError as exc:  # an input or output file
            console.error(f"{exc.filename or 'file'}: {exc.strerror or exc}", "io_error")
            return EXIT_ERROR
        except Exception as exc:  # noqa: BLE001 - the operator's own tool: say what broke, no traceback
            console.error(f"internal error: {type(exc).__name__}: {exc}", "internal")
            return EXIT_ERROR

    return run
