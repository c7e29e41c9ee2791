"""Profile a retrieval tool over the query mix with cProfile (not part of ``make bench``).

    python -m bench.profile --size 100000 --tool memory_search [--cls common_en] [--top 25]

Prints the functions with the most own time, so an optimisation starts where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
from pathlib import Path

from bench import corpus
from bench.search import open_service, retrieval_tools


def profile(size: int, tool: str, cls: str | None, n_queries: int, top: int, sort: str) -> str:
    field = dict(retrieval_tools())[tool]
    db = corpus.build_db(corpus.CorpusParams(size))
    qs = [q for c, q in corpus.queries(7, n_queries) if cls is None or c == cls]
    with tempfile.TemporaryDirectory(prefix="mnemo-profile-") as tmp:
        svc, caller = open_service(corpus.working_copy(db, Path(tmp)))
        for q in qs[:20]:
            svc.invoke(tool, caller, {field: q})
        prof = cProfile.Profile()
        prof.enable()
        for q in qs:
            svc.invoke(tool, caller, {field: q})
        prof.disable()
        svc.ports.close()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats(sort).print_stats(top)
    return f"{len(qs)} queries ({cls or 'whole mix'}) of {tool} at {size} memories\n" + out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--tool", default="memory_search")
    parser.add_argument("--cls", help="one query class of bench.corpus.QUERY_MIX")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime")
    a = parser.parse_args()
    print(profile(a.size, a.tool, a.cls, a.queries, a.top, a.sort))


if __name__ == "__main__":
    main()
