"""A public conversational-memory set: MemoryBank's evaluation data (Zhong et al., "MemoryBank:
Enhancing Large Language Models with Long-Term Memory", AAAI 2024; the GitHub repository
zhongwanjun/MemoryBank-SiliconFriend, ``eval_data/en`` and ``eval_data/cn``, MIT licence, copied
in ``bench/data/memorybank/LICENSE``), derived into ``bench/data/memorybank/memorybank.json``.

The set: 15 users each chatting with an AI companion over about ten days, in English and in
Chinese (the same users, translated), and 7 probing questions per user. Each turn of the chat — the
user's message and the companion's answer — is one memory (``"Emily: …"``, ``"AI companion: …"``),
at its day; each user is a project.

The repository labels no evidence, so only the questions that name their day ("On May 4th, I
shared with you some problems I encountered. What were they about?", "在4月27号这天，我在公园里
跑了多久？") are kept — 35 English, 35 Chinese — and their evidence is that day's turns (the
session, as LongMemEval labels sessions): a question is answered at rank k when one of them is
among the first k (``"any": true``). The day itself is never in a memory's text, so it cannot be
matched by words; the question's other words must find the session.

    python -m bench.public_set /path/to/MemoryBank-SiliconFriend   # rewrites the JSON from a checkout
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "memorybank" / "memorybank.json"
SOURCE = "memorybank"
COMPANION = {"en": "AI companion", "zh": "AI伴侣"}
_MONTHS = {"april": 4, "may": 5}
_EN_DAY = re.compile(r"\b(April|May) (\d{1,2})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_ZH_DAY = re.compile(r"([45])月(\d{1,2})[日号]")


def _day(question: str, lang: str) -> str | None:
    if lang == "en":
        m = _EN_DAY.search(question)
        return f"2023-{_MONTHS[m.group(1).lower()]:02d}-{int(m.group(2)):02d}" if m else None
    m = _ZH_DAY.search(question)
    return f"2023-{int(m.group(1)):02d}-{int(m.group(2)):02d}" if m else None


def derive(checkout: Path) -> dict[str, Any]:
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for lang, folder, bank, probes in (
        ("en", "en", "memory_bank_en.json", "probing_questions_en.jsonl"),
        ("zh", "cn", "memory_bank_cn.json", "probing_questions_cn.jsonl"),
    ):
        users = json.loads((checkout / "eval_data" / folder / bank).read_text(encoding="utf-8"))
        by_day: dict[tuple[str, str], list[str]] = {}
        users = {name.strip(): user for name, user in users.items()}  # a few names carry spaces
        for u, (name, user) in enumerate(users.items()):
            project = f"{SOURCE}-{lang}-{u}"
            for day, turns in sorted(user["history"].items()):
                at = datetime.fromisoformat(day).replace(hour=20, tzinfo=UTC)
                for i, turn in enumerate(turns):
                    for j, (speaker, text) in enumerate(
                        ((name, turn.get("query", "")), (COMPANION[lang], turn.get("response", "")))
                    ):
                        if not text.strip():
                            continue
                        mid = f"{project}-t{len(memories)}"
                        when = (at + timedelta(minutes=2 * i + j)).isoformat()
                        memories.append(
                            {"id": mid, "project": project, "lang": lang, "content": f"{speaker}: {text.strip()}",
                             "created_at": when, "updated_at": when}
                        )  # fmt: skip
                        by_day.setdefault((name, day), []).append(mid)
        for line in (checkout / "eval_data" / folder / probes).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            ((name, questions),) = json.loads(line).items()
            name = name.strip()
            u = list(users).index(name)
            for k, question in enumerate(questions):
                day = _day(question, lang)
                if day is None or (name, day) not in by_day:
                    continue
                queries.append(
                    {"id": f"{SOURCE}-{lang}-{u}-q{k}", "project": f"{SOURCE}-{lang}-{u}", "lang": lang,
                     "source": SOURCE, "query": question.strip().strip('"'), "relevant": by_day[(name, day)],
                     "any": True}
                )  # fmt: skip
    return {"memories": memories, "queries": queries}


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def main(argv: list[str]) -> None:
    data = derive(Path(argv[0]))
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n", "utf-8")
    print(f"{DATA}: {len(data['memories'])} memories, {len(data['queries'])} questions, {DATA.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
