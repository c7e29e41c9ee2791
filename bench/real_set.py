"""Real questions over real conversations: three public dialogue question sets, each turn one memory,
derived into ``bench/data/real/real.jsonl.gz`` (one JSON object a line: ``{"provenance": …}``,
``{"memory": …}`` or ``{"query": …}``; under 1 MiB) by this script from the sets' GitHub repositories.

* **friendsqa** (emorynlp/FriendsQA, ``dat/friendsqa_dev.json``; Apache-2.0, copyright Emory
  University; Yang & Choi, SIGDIAL 2019): scenes of the TV show *Friends* with questions written by
  crowd workers. A memory is one utterance, ``"Ross Geller: Who the hell is Jordie ?"`` (the
  speakers joined by ", "; the set's tokenised text as it is); a scene is one session; an episode
  (``s01_e23``) is one project, so a question is asked among all the episode's scenes.
  **Evidence**: the utterances the annotators marked as holding an answer (``answers[].utterance_id``,
  the union over annotators); R@k is the share of them among the first k (at most k wanted).
* **dream** (nlpdata/dream, ``data/dev.json``; "intended for non-commercial research purpose
  only", its ``license.txt``; Sun et al., TACL 2019): English exam dialogues with multiple-choice
  questions written by exam experts. A memory is one turn (``"W: For ten years. …"``); a dialogue
  is one session; ``GROUP`` dialogues in a row make one project. **Evidence**: the turns of the
  dialogue the question was written for; the question is answered at k when one of them is among
  the first k (``"any": true``, as LongMemEval scores sessions). The set marks no turn.
* **c3** (nlpdata/c3, ``data/c3-d-dev.json``, the dialogue part; the same non-commercial licence in
  its ``license.txt``; Sun et al., TACL 2020): Chinese exam dialogues with multiple-choice
  questions; derived and scored as dream.

The first ``DREAM_DIALOGUES`` / ``C3_DIALOGUES`` dialogues of each dev file are kept, so the file
stays small. Turns of a session are a minute apart and sessions an hour apart, in the set's order.
Only the questions and turns are kept; the answer choices never reach the bench.

    python -m bench.real_set /work/.mirror/emorynlp+FriendsQA/repo /work/.mirror/nlpdata+dream/repo \
        /work/.mirror/nlpdata+c3/repo        # git directories or checkouts; rewrites the data file
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "real" / "real.jsonl.gz"
GROUP = 40
DREAM_DIALOGUES = 400
C3_DIALOGUES = 600
START = datetime(2026, 1, 5, 9, tzinfo=UTC)
SOURCES = {
    "friendsqa": ("emorynlp/FriendsQA", "dat/friendsqa_dev.json", "Apache-2.0"),
    "dream": ("nlpdata/dream", "data/dev.json", "non-commercial research only (license.txt)"),
    "c3": ("nlpdata/c3", "data/c3-d-dev.json", "non-commercial research only (license.txt)"),
}


def _read(repo: Path, path: str) -> Any:
    """A file of a checkout, or of a bare git directory's HEAD."""
    if (repo / path).is_file():
        return json.loads((repo / path).read_text(encoding="utf-8"))
    out = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True)
    return json.loads(out.stdout.decode("utf-8"))


def _commit(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return done.stdout.strip()


class _Clock:
    def __init__(self) -> None:
        self.at = START

    def session(self) -> None:
        self.at += timedelta(hours=1)

    def turn(self) -> str:
        self.at += timedelta(minutes=1)
        return self.at.isoformat()


def _memory(out: list[dict[str, Any]], clock: _Clock, project: str, session: str, lang: str, content: str) -> str:
    mid = f"{session}-t{len(out)}"
    when = clock.turn()
    out.append({"id": mid, "project": project, "session": session, "lang": lang, "content": content,
                "created_at": when, "updated_at": when})  # fmt: skip
    return mid


def _friendsqa(raw: Any, clock: _Clock) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for scene in raw["data"]:
        title = scene["title"]  # s01_e23_c06
        project = "friendsqa-" + title.rsplit("_c", 1)[0].replace("_", "-")
        session = f"friendsqa-{title.replace('_', '-')}"
        clock.session()
        (paragraph,) = scene["paragraphs"]
        ids: dict[int, str] = {}
        for u in paragraph["utterances:"]:
            text = u["utterance"].strip()
            if text:
                speakers = ", ".join(u["speakers"]) or "Someone"
                ids[u["uid"]] = _memory(memories, clock, project, session, "en", f"{speakers}: {text}")
        for q in paragraph["qas"]:
            relevant = sorted({ids[a["utterance_id"]] for a in q["answers"] if a["utterance_id"] in ids})
            if relevant:
                queries.append({"id": f"friendsqa-{q['id']}", "project": project, "lang": "en", "source": "friendsqa",
                                "query": q["question"].strip(), "relevant": relevant})  # fmt: skip
    return memories, queries


def _exam(
    raw: Any, source: str, lang: str, keep: int, clock: _Clock
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for n, (turns, questions, dialogue_id) in enumerate(raw[:keep]):
        project = f"{source}-{n // GROUP}"
        session = f"{source}-{dialogue_id}"
        clock.session()
        relevant = [_memory(memories, clock, project, session, lang, t.strip()) for t in turns if t.strip()]
        for k, q in enumerate(questions):
            queries.append({"id": f"{session}-q{k}", "project": project, "lang": lang, "source": source,
                            "query": q["question"].strip(), "relevant": relevant, "any": True})  # fmt: skip
    return memories, queries


def derive(friendsqa: Path, dream: Path, c3: Path) -> dict[str, Any]:
    clock = _Clock()
    parts = [
        _friendsqa(_read(friendsqa, SOURCES["friendsqa"][1]), clock),
        _exam(_read(dream, SOURCES["dream"][1]), "dream", "en", DREAM_DIALOGUES, clock),
        _exam(_read(c3, SOURCES["c3"][1]), "c3", "zh", C3_DIALOGUES, clock),
    ]
    provenance = {
        name: {"repository": repo, "file": path, "licence": licence, "commit": _commit(checkout)}
        for (name, (repo, path, licence)), checkout in zip(SOURCES.items(), (friendsqa, dream, c3), strict=True)
    }
    return {
        "provenance": provenance,
        "memories": [m for mems, _ in parts for m in mems],
        "queries": [q for _, qs in parts for q in qs],
    }


def load() -> dict[str, Any]:
    data: dict[str, Any] = {"memories": [], "queries": []}
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "provenance" in row:
                data["provenance"] = row["provenance"]
            elif "memory" in row:
                data["memories"].append(row["memory"])
            else:
                data["queries"].append(row["query"])
    return data


def main(argv: list[str]) -> None:
    data = derive(Path(argv[0]), Path(argv[1]), Path(argv[2]))
    DATA.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"provenance": data["provenance"]}]
    rows += [{"memory": m} for m in data["memories"]] + [{"query": q} for q in data["queries"]]
    with gzip.GzipFile(DATA, "wb", mtime=0) as f:
        f.write("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode("utf-8"))
    counts = {s: sum(1 for q in data["queries"] if q["source"] == s) for s in SOURCES}
    print(f"{DATA}: {len(data['memories'])} memories, {len(data['queries'])} questions {counts}, "
          f"{DATA.stat().st_size} bytes")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
