"""Time questions over memories spread across 90 days, English and Chinese: recall@5 of
``recall`` reading the time words (``parse_time`` true, the default) against the same questions
without (``parse_time: false``), and what reading costs a recall call (CPU time per call, p50 /
p99, paired on the same questions) at ``--memories`` memories (default 10,000).

The corpus: for each of 6 English and 6 Chinese topics, one decision a day over the last 90 days
(updated at noon UTC, or a minute ago for today), plus filler memories of other words on random
days up to ``--memories``. A question asks about one topic with one time expression
(``what did we decide about deploys last week``, ``上周关于部署的决定``); its relevant memories
are the topic's in the window the expression names, computed here by plain date arithmetic
(weeks from Monday, UTC), not by mnemo.timewords. recall@5 = |top 5 ∩ relevant| / min(5,
|relevant|); questions whose window holds none of the topic's memories are left out.

SQLite backend, embedder off (``MNEMO_EMBEDDER=none``: recall's hybrid is lexical) so the figure
is the words' and the window's alone. Run:
``MNEMO_EMBEDDER=none .venv/bin/python -m bench.time_questions [--memories N]`` (JSON on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

DAYS = 90
K = 5
EN_TOPICS = ["deploys", "billing", "incidents", "hiring", "pricing", "standups"]
ZH_TOPICS = ["部署", "账单", "故障", "招聘", "定价", "例会"]
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September"]
EN_MONTHS += ["October", "November", "December"]
FILLER = ["alpha", "beta", "gamma", "delta", "kernel", "cache", "queue", "schema", "router", "token"]
FILLER += ["缓存", "队列", "路由", "接口", "日志", "监控"]


def _month(d: date, shift: int) -> tuple[date, date]:
    y, m = divmod(d.month - 1 + shift, 12)
    start = date(d.year + y, m + 1, 1)
    y2, m2 = divmod(m + 1, 12)
    return start, date(start.year + y2, m2 + 1, 1)


def windows(today: date) -> list[tuple[str, str, date, date | None]]:
    """(English words, Chinese words, first day, day after the last or None: open)."""
    monday = today - timedelta(days=today.weekday())
    two_ago = _month(today, -2)
    return [
        ("yesterday", "昨天", today - timedelta(days=1), today),
        ("3 days ago", "三天前", today - timedelta(days=3), today - timedelta(days=2)),
        ("last week", "上周", monday - timedelta(days=7), monday),
        ("this week", "本周", monday, monday + timedelta(days=7)),
        ("last month", "上个月", *_month(today, -1)),
        (f"in {EN_MONTHS[two_ago[0].month - 1]}", f"{two_ago[0].month}月", *two_ago),
        ("since Monday", "自周一以来", monday, None),
        ("the past 7 days", "最近7天", today - timedelta(days=6), today + timedelta(days=1)),
    ]


def _load(ports: Any, count: int, now: datetime) -> tuple[Any, Any, dict[str, tuple[str, date]]]:
    from mnemo.config import Settings
    from mnemo.embedding import build_embedder
    from mnemo.models.records import MemoryRecord, RateLimits
    from mnemo.service import tenancy
    from mnemo.service.pipeline import Service
    from ulid import ULID

    cfg = Settings()
    svc = Service(ports, embedder=build_embedder(cfg.embedder, cfg))
    workspace, project = tenancy.create_workspace(ports, "time")
    ports.tenants.set_limits(workspace.id, RateLimits(search=1_000_000, write=1_000_000))
    key = tenancy.create_key(ports, workspace.id, label="time", scopes=["memory:read", "memory:write"]).plain
    rng = random.Random(39)
    today = now.date()
    rows: list[tuple[str, str | None, int]] = []
    for back in range(DAYS):
        for topic in EN_TOPICS:
            rows.append((f"We decided the {topic} plan for item {rng.randrange(10_000)}: owner {back}", topic, back))
        for topic in ZH_TOPICS:
            rows.append((f"关于{topic}的决定：第{rng.randrange(10_000)}项由{back}号负责", topic, back))
    while len(rows) < count:
        words = " ".join(rng.choice(FILLER) for _ in range(8))
        rows.append((f"note {len(rows)}: {words}", None, rng.randrange(DAYS)))
    topics: dict[str, tuple[str, date]] = {}
    with ports.store.unit_of_work():
        for content, topic, back in rows:
            day = today - timedelta(days=back)
            at = min(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), now - timedelta(minutes=1))
            ulid = ULID.from_bytes(int(at.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10))
            record = MemoryRecord(
                id=f"mem_{ulid}",
                workspace_id=workspace.id,
                project_id=project.id,
                content=content,
                kind="decision" if topic else "note",
                tags=[],
                path=None,
                source="bench",
                version=1,
                created_at=at,
                updated_at=at,
                embedding=None,
            )
            ports.store.create(record)
            ports.index.upsert(record)
            if topic:
                topics[record.id] = (topic, at.date())
    return svc, svc.authenticate(f"Bearer {key}"), topics


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def run(count: int) -> dict[str, Any]:
    from mnemo.backends.sqlite import SqliteBackend

    now = datetime.now(UTC)
    today = now.date()
    with tempfile.TemporaryDirectory() as tmp:
        backend = SqliteBackend(Path(tmp) / "time.db")
        try:
            svc, caller, topics = _load(backend, count, now)
            questions = []
            for en, zh, first, end in windows(today):
                for lang, words, topic_list in (("en", en, EN_TOPICS), ("zh", zh, ZH_TOPICS)):
                    for topic in topic_list:
                        relevant = {
                            ref
                            for ref, (t, d) in topics.items()
                            if t == topic and d >= first and (end is None or d < end)
                        }
                        if not relevant:
                            continue
                        q = f"what did we decide about {topic} {words}" if lang == "en" else f"{words}关于{topic}的决定"
                        questions.append((lang, words if lang == "en" else zh, q, relevant))
            scores: dict[str, dict[str, list[float]]] = {"parse_time": {}, "no_parse": {}}
            cpu: dict[str, list[float]] = {"parse_time": [], "no_parse": []}
            for lang, expr, q, relevant in questions:
                for name, parse in (("parse_time", True), ("no_parse", False)):
                    started = time.process_time()
                    result = svc.invoke("recall", caller, {"query": q, "limit": K, "parse_time": parse}).result
                    cpu[name].append(time.process_time() - started)
                    top = [item.reference for item in result.results][:K]
                    score = len(set(top) & relevant) / min(K, len(relevant))
                    scores[name].setdefault(f"{lang}: {expr}", []).append(score)
        finally:
            backend.close()

    def summary(name: str) -> dict[str, Any]:
        by_expr = {e: round(statistics.mean(v), 3) for e, v in scores[name].items()}
        every = [s for v in scores[name].values() for s in v]
        langs = {
            lang: round(statistics.mean([s for e, v in scores[name].items() if e.startswith(lang) for s in v]), 3)
            for lang in ("en", "zh")
        }
        ms = [c * 1000 for c in cpu[name]]
        return {
            "recall_at_5": round(statistics.mean(every), 3),
            "by_language": langs,
            "by_expression": by_expr,
            "cpu_ms_p50": round(_pct(ms, 0.5), 2),
            "cpu_ms_p99": round(_pct(ms, 0.99), 2),
        }

    return {
        "memories": count,
        "questions": len(questions),
        "embedder": os.environ.get("MNEMO_EMBEDDER", "static"),
        "now": now.isoformat(timespec="seconds"),
        "parse_time": summary("parse_time"),
        "no_parse": summary("no_parse"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    print(json.dumps(run(args.memories), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
