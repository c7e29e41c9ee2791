"""Nothing private is saved: ``<private>…</private>`` spans are removed from content, and a write
that still holds a secret is refused, naming the kinds found and never the secret itself.

Every write path calls it once, here in the service: ``memory_add`` and ``memory_update`` (REST and
MCP alike) and the import (``mnemo import``). Read paths never change what was stored before. A
workspace whose operator turned its secret check off (``Workspace.secret_check``: ``mnemo privacy
set --secret-check off`` or ``POST /v1/admin/privacy``) stores secrets as given; the ``<private>``
spans are removed whatever the setting.

The detector is this module's own list of patterns, each for one kind of credential whose shape is
distinctive enough that ordinary notes do not match it, plus assignments (``password = …``,
``api_key: …``) whose value looks random (Shannon entropy, digits or symbols). It was chosen over
Yelp's detect-secrets, whose scanner is a slow import at every cold start of the write function
and whose default high-entropy plugins flag most ordinary memories; its named-credential plugins
are regular expressions like these (the comparison: bench/results/docstring-figures.md). Here
the quality bench's memories and notes about secrets that hold none all pass
(``tests/unit/test_privacy.py``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from mnemo.errors import SecretDetected

PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

#: kind -> pattern; each match is one secret of that kind
PATTERNS: dict[str, re.Pattern[str]] = {
    "private_key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "aws_access_key_id": re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    "aws_secret_access_key": re.compile(
        r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
    ),
    "github_token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    "gitlab_token": re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    "slack_token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "slack_webhook": re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+"),
    "stripe_key": re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    "google_api_key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    "openai_or_anthropic_key": re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    "npm_token": re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "bearer_token": re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
}

#: ``scheme://user:password@host``: the password, unless it is a placeholder
CONNECTION = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<password>[^\s@/]+)@[^\s/]+", re.IGNORECASE)
PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{?[^}]*\}?\}|password|pass|secret)$"
)

#: ``password = value`` and the like: the value, when it looks random
ASSIGNMENT = re.compile(
    r"(?i)\b(?:password|passwd|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth[_-]?token)\w*[\"']?\s*(?:=|:|:=|=>)\s*[\"']?(?P<value>[^\s\"',;]{8,})"
)
MIN_ENTROPY = 3.0


def strip_private(text: str) -> str:
    """The text without its ``<private>`` spans (an unclosed one runs to the end), trimmed."""
    if "<" not in text:
        return text
    return PRIVATE_SPAN.sub("", text).strip() if PRIVATE_SPAN.search(text) else text


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def secret_kinds(text: str) -> list[str]:
    """The kinds of secret the text holds, in PATTERNS' order (then the two generic ones)."""
    kinds = [kind for kind, pattern in PATTERNS.items() if pattern.search(text)]
    for match in CONNECTION.finditer(text):
        if not PLACEHOLDER.match(match["password"]):
            kinds.append("connection_string_password")
            break
    for match in ASSIGNMENT.finditer(text):
        value = match["value"]
        if (
            not PLACEHOLDER.match(value)
            and _entropy(value) >= MIN_ENTROPY
            and any(not c.isalpha() for c in value)
            and not value.isdigit()
        ):
            kinds.append("high_entropy_assignment")
            break
    return kinds


def refuse_secrets(fields: Iterable[tuple[str, str | None]], where: str = "") -> None:
    """Raise :class:`SecretDetected` naming the kinds (and fields) found, never their values."""
    found: list[dict[str, object]] = []
    kinds: list[str] = []
    for name, value in fields:
        if not value:
            continue
        for kind in secret_kinds(value):
            found.append({"loc": [name], "type": kind, "msg": f"looks like a {kind.replace('_', ' ')}"})
            if kind not in kinds:
                kinds.append(kind)
    if kinds:
        raise SecretDetected(
            f"{where}refused: it looks like it holds a secret ({', '.join(kinds)}). Remove it, or wrap what "
            "must not be stored in <private>…</private>; memories are readable by every key of the project.",
            details=found,
        )
