"""The settings of Mnemo's own clients (``mnemo hook``; ``MNEMO_PROJECT`` also for ``mnemo mcp``),
declared with the standard library only.

Claude Code starts ``mnemo hook`` as a cold process on every prompt, so the hook cannot import
pydantic to read its settings. They are declared here once: :class:`mnemo.config.Settings`
inherits these fields (so the server validates them and the generated table lists them), and
:func:`read` gives the hook the same fields from the same ``MNEMO_<FIELD>`` names, leniently: a
value that does not parse keeps the default, because a hook fails open.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_PREFIX = "MNEMO_"


class ClientSettings:
    """Fields as in :class:`mnemo.config.Settings`: ``MNEMO_<FIELD>``, an annotation and a default."""

    #: the server the hook asks (``mnemo serve``, or a deployment's base URL)
    url: str = "http://127.0.0.1:8787"
    #: the key the hook sends: ``memory:read`` (and ``admin`` to create a project on first use)
    key: str = ""
    #: a fixed project: the hook's instead of the repository's, ``mnemo mcp``'s without ``--project``
    project: str | None = None
    #: how the hook names the project: ``remote`` (the origin remote's repository name, else the
    #: folder's name) or ``folder``
    hook_project_from: str = "remote"
    #: events the hook skips, comma-separated (``UserPromptSubmit,Stop``)
    hook_off: str = ""
    #: where the hook's once-per-session marks live; None = ``$XDG_STATE_HOME/mnemo/hooks``
    hook_state_dir: Path | None = None
    #: the token budget of SessionStart's ``recall_context``
    hook_session_tokens: int = 1200
    #: the token budget of what UserPromptSubmit injects
    hook_prompt_tokens: int = 300
    #: the cosine of prompt and memory under which a memory is not injected: the lowest at which no
    #: everyday coding prompt injects, with minilm (the default) and static alike (bench/hook_threshold.py)
    hook_min_similarity: float = 0.45
    #: seconds the hook waits for the server in all; None = its own per event (``hook.DEADLINE_S``)
    hook_deadline_s: float | None = None


#: how :func:`read` parses an annotation (``from __future__ import annotations``: they are strings)
_PARSERS: dict[str, Any] = {"str": str, "int": int, "float": float, "Path": Path}


def names() -> dict[str, str]:
    """Each field by its variable's name (``MNEMO_HOOK_OFF`` -> ``hook_off``)."""
    return {ENV_PREFIX + field.upper(): field for field in ClientSettings.__annotations__}


def read(environ: Mapping[str, str]) -> ClientSettings:
    """The fields from ``environ`` (a variable's name in any case, as for ``Settings``); an empty or
    unparsable value keeps the default."""
    given = {k.upper(): v for k, v in environ.items() if k.upper().startswith(ENV_PREFIX)}
    found = ClientSettings()
    for variable, field in names().items():
        raw = given.get(variable, "").strip()
        if not raw:
            continue
        kind = _PARSERS[ClientSettings.__annotations__[field].removesuffix(" | None")]
        try:
            setattr(found, field, kind(raw))
        except ValueError:
            continue
    return found
