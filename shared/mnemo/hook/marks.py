"""Once per session: a mark file per session and event in the hook's state folder, created
exclusively (two hooks racing agree), swept after a week."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from mnemo.clientconfig import read

STATE_DAYS = 7


def _mark(env: dict[str, str], session_id: str, what: str) -> Path:
    digest = hashlib.sha256(session_id.encode()).hexdigest()[:32]
    return state_dir(env) / f"{digest}.{what}"


def state_dir(env: dict[str, str]) -> Path:
    chosen = read(env).hook_state_dir
    if chosen is not None:
        return chosen
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mnemo" / "hooks"


def first_time(env: dict[str, str], session_id: str, what: str) -> bool:
    """True the first time ``what`` happens in the session (an exclusive create: two hooks racing
    agree); marks older than a week are swept."""
    mark = _mark(env, session_id, what)
    folder = mark.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    _sweep(folder)
    return True


def done(env: dict[str, str], session_id: str, what: str) -> bool:
    """Whether ``what`` already happened in the session (its mark exists; no session, no mark)."""
    return bool(session_id) and _mark(env, session_id, what).exists()


def _sweep(folder: Path) -> None:
    cutoff = time.time() - STATE_DAYS * 86400
    for old in folder.iterdir():
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
