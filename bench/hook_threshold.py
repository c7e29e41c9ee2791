"""The UserPromptSubmit hook's threshold: how near a prompt's meaning must a memory be to be injected.

The hook asks ``recall`` in ``semantic`` mode, whose score is the cosine of the prompt's and the
memory's vectors (the server's embedder: ``MNEMO_EMBEDDER``, by default ``auto``, i.e. ``minilm``
where its extra is installed), and injects only results at or above
``MIN_SIMILARITY`` (``mnemo.hook.events``). Measured here on the quality set's corpus
(``bench/data/quality.json``, 2,760 memories):

* **related** -- each ``paraphrase`` query (a question in other words than its one memory) against
  its memory: the cosines the hook should keep;
* **unrelated** -- prompts a coding agent is given every day that no memory of the corpus is about
  (``UNRELATED``, written by hand): the best cosine each gets from the whole corpus, which the
  threshold must stay above so that they inject nothing.

Run: ``.venv/bin/python -m bench.hook_threshold`` (the default embedder; writes
bench/results/hook_threshold.json) or ``MNEMO_EMBEDDER=static .venv/bin/python -m bench.hook_threshold``
(writes bench/results/hook_threshold-static.json).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench import quality_set

UNRELATED = (
    "fix the failing unit test in the parser module",
    "rename this variable to something clearer",
    "why does mypy complain about this Optional return type",
    "write a docstring for this function",
    "add type hints to utils.py",
    "run the linter and fix what it reports",
    "can you explain what this regular expression does",
    "make the README's install section shorter",
    "convert this for loop into a list comprehension",
    "the build is failing on CI with an import error, look at the log",
    "refactor the class so that the constructor takes fewer arguments",
    "add a unit test for the empty input case",
    "what does this stack trace mean",
    "bump the version number and update the changelog",
    "sort the imports in this file",
    "write a bash script that counts lines in all python files",
    "how do I squash the last three commits",
    "translate this error message into French",
    "thanks, that looks good",
    "undo the last change you made",
    "show me the diff before committing",
    "split this long function into smaller ones",
    "why is this React component rendering twice",
    "add pagination to the list endpoint",
    "the tests pass locally but not in docker",
    "set up a GitHub Actions workflow for lint",
    "what is the difference between a tuple and a list",
    "generate a random password in python",
    "delete the unused helper functions",
    "format the JSON in this file",
)

RESULTS = Path(__file__).resolve().parent / "results"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def main() -> int:
    import os

    from mnemo.config import Settings
    from mnemo.embedding import build_embedder, cosine, resolve
    from mnemo.service.vectors import embed_query

    data = quality_set.load()
    memories = {m["id"]: m["content"] for m in data["memories"]}
    name = resolve(Settings().embedder)
    embedder = build_embedder(name)
    assert embedder is not None, "MNEMO_EMBEDDER=none: no similarity to measure"
    ids = list(memories)
    vectors = dict(zip(ids, embedder.embed([memories[i] for i in ids]), strict=True))

    related: dict[str, list[float]] = {}
    for query in data["queries"]:
        if query["class"] not in ("paraphrase", "exact", "inflected") or not query.get("query"):
            continue
        qv = embed_query(embedder, query["query"])
        related.setdefault(query["class"], []).extend(cosine(qv, vectors[r]) for r in query["relevant"])

    unrelated: list[float] = []
    for prompt in UNRELATED:
        pv = embed_query(embedder, prompt)
        unrelated.append(max(cosine(pv, v) for v in vectors.values()))

    from mnemo.hook.events import MIN_SIMILARITY

    thresholds = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
    env = "MNEMO_EMBEDDER=static " if os.environ.get("MNEMO_EMBEDDER") == "static" else ""
    report = {
        "command": f"{env}.venv/bin/python -m bench.hook_threshold",
        "embedder": name,
        "model": embedder.model,
        "threshold": MIN_SIMILARITY,
        "related": {
            cls: {"n": len(c), "p10": round(_pct(c, 0.1), 3), "p50": round(_pct(c, 0.5), 3)}
            for cls, c in related.items()
        },
        "unrelated_best": {
            "n": len(unrelated),
            "p50": round(_pct(unrelated, 0.5), 3),
            "p90": round(_pct(unrelated, 0.9), 3),
            "max": round(max(unrelated), 3),
        },
        "kept_at": {
            str(t): {
                **{cls: round(sum(x >= t for x in c) / len(c), 3) for cls, c in related.items()},
                "unrelated_injecting": sum(x >= t for x in unrelated),
            }
            for t in thresholds
        },
    }
    out = RESULTS / ("hook_threshold.json" if name == "minilm" else f"hook_threshold-{name}.json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
