"""Renders the results dict of ``bench.run`` as Markdown."""

from __future__ import annotations

from typing import Any

from bench import run as r


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _ok(flag: bool) -> str:
    return "✅" if flag else "❌"


def targets(res: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    search = res.get("search")
    if search:
        big = str(max(int(s) for s in search["sizes"]))
        for tool, t in search["sizes"][big]["tools"].items():
            for pct, target in (("p50", r.TARGET_P50_MS), ("p99", r.TARGET_P99_MS)):
                wall, cpu = t["all"][f"{pct}_ms"], t["cpu"][f"{pct}_ms"]
                rows.append(
                    [f"{tool} {pct} at {big}", f"≤ {target} ms", f"{wall} ms", f"{cpu} ms", _ok(wall <= target),
                     _ok(cpu <= target)]
                )  # fmt: skip
        tools = search["sizes"][big]["tools"]
        for tool in ("recall", "recall_context"):
            if tool in tools and f"{tool}:lexical" in tools:
                got = round(tools[tool]["all"]["p50_ms"] / tools[f"{tool}:lexical"]["all"]["p50_ms"], 2)
                cpu = round(tools[tool]["cpu"]["p50_ms"] / tools[f"{tool}:lexical"]["cpu"]["p50_ms"], 2)
                rows.append([f"{tool} (hybrid) p50 ÷ lexical at {big}", f"≤ {r.TARGET_HYBRID_RATIO}", got, cpu,
                             _ok(got <= r.TARGET_HYBRID_RATIO), _ok(cpu <= r.TARGET_HYBRID_RATIO)])  # fmt: skip
        for tool, t in search["sizes"][big]["tools"].items():
            wall = t["stopword"]["p50_ms"]
            target = r.TARGET_STOPWORD_P50_MS
            rows.append([f"{tool} stopword p50 at {big}", f"≤ {target} ms", f"{wall} ms", "", _ok(wall <= target), ""])
    quality = res.get("quality")
    if quality:
        for backend, b in quality["backends"].items():
            if b.get("status") != "done":
                continue
            for cls in ("exact", "inflected"):
                got = b["tools"]["recall"]["classes"][cls]["recall_at_5"]
                rows.append([f"recall recall@5, {cls}, {backend}", f"≥ {r.TARGET_RECALL_AT_5}", got, "",
                             _ok(got >= r.TARGET_RECALL_AT_5), ""])  # fmt: skip
            para = b["tools"]["recall"]["classes"].get("paraphrase")
            if para:
                got = para["recall_at_5"]
                rows.append([f"recall recall@5, paraphrase, {backend}", f"≥ {r.TARGET_PARAPHRASE_AT_5}", got, "",
                             _ok(got >= r.TARGET_PARAPHRASE_AT_5), ""])  # fmt: skip
            lexical = b["tools"].get("recall:lexical")
            if lexical:
                lost = [
                    cls
                    for cls, c in b["tools"]["recall"]["classes"].items()
                    if cls != "paraphrase" and c["recall_at_5"] < lexical["classes"][cls]["recall_at_5"]
                ]
                rows.append([f"recall (hybrid) loses nothing against lexical per class, {backend}", "none lower",
                             ", ".join(lost) or "none", "", _ok(not lost), ""])  # fmt: skip
            got = b["tools"]["search_memory"]["strict_precision"]
            rows.append([f"search_memory strict precision, {backend}", "= 1.0", got, "", _ok(got == 1.0), ""])
    add = res.get("add")
    if add and "embedding_ratio_p50" in add:
        got = add["embedding_ratio_p50"]
        rows.append(["memory_add p50 with the embedder ÷ without", f"≤ {r.TARGET_ADD_RATIO}", got, "",
                     _ok(got <= r.TARGET_ADD_RATIO), ""])  # fmt: skip
    overhead = res.get("overhead")
    if overhead:
        for tool, t in overhead["tools"].items():
            ratio = t["ratio_of_totals"]
            what = f"{tool} handler ÷ bare SQL at {overhead['size']}"
            rows.append([what, f"< {r.TARGET_OVERHEAD}", ratio, "", _ok(ratio < r.TARGET_OVERHEAD), ""])
    cold = res.get("coldstart")
    if cold:
        for mode, modules in cold["modes"].items():
            for module, m in modules.items():
                if module.startswith("functions."):
                    ok = _ok(m["ratio"] < r.TARGET_IMPORT_RATIO)
                    rows.append(
                        [f"import {module} ÷ baseline ({mode})", f"< {r.TARGET_IMPORT_RATIO}", m["ratio"], "", ok, ""]
                    )
    return rows


def render(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [
        "# Mnemo benchmark results",
        "",
        f"- command: `{res['command']}` (`make bench` runs `python -m bench.run`)",
        f"- date: {res['date']}; total {res['total_s']} s; code at {m['commit']}",
        f"- machine: {m['nproc']} CPUs ({m['cpu']}), shared with other jobs; load average "
        f"{m['loadavg_start']} at start, {m['loadavg_end']} at end",
        f"- Python {m['python']}, SQLite {m['sqlite']}, {m['platform']}; "
        f"PYTHONDONTWRITEBYTECODE={m['PYTHONDONTWRITEBYTECODE'] or '(unset)'}",
        f"- parameters: {res['parameters']}",
        *([f"- merged: {res['merged']}"] if res.get("merged") else []),
        "",
        "Latencies are milliseconds, nearest-rank percentiles. The machine is shared, so figures "
        "move by ±30 % between runs; compare figures taken in the same run.",
        "",
    ]
    rows = targets(res)
    if rows:
        lines += [
            "## Targets",
            "",
            *_table(["what", "target", "measured (wall)", "CPU time", "met (wall)", "met (CPU)"], rows),
            "",
        ]

    search = res.get("search")
    if search:
        lines += [
            "## Retrieval latency in process (`Service.invoke`)",
            "",
            f"Tools found in the registry: {', '.join(search['tools'])}. Query mix: "
            + ", ".join(f"{k} {v} %" for k, v in search["query_mix"].items())
            + " (see `bench/corpus.py`). `stopword` (one of the ten most frequent words) is the worst "
            "case, measured apart from the mix.",
            "",
        ]
        rows = []
        for size, s in search["sizes"].items():
            for tool, t in s["tools"].items():
                a, c = t["all"], t["cpu"]
                build = s["build_s"] if s["build_s"] is not None else "cached"
                rows.append(
                    [size, tool, a["p50_ms"], a["p90_ms"], a["p99_ms"], a["mean_ms"], c["p50_ms"], c["p99_ms"],
                     t["stopword"]["p50_ms"], s["db_mb"], build]
                )  # fmt: skip
        header = ["memories", "tool", "p50", "p90", "p99", "mean", "CPU p50", "CPU p99", "stopword p50", "DB MB"]
        lines += _table([*header, "corpus build s"], rows)
        lines += [
            "",
            "p50…mean are wall-clock; *CPU* is the calling thread's CPU time (`time.thread_time`), "
            "which leaves out waiting for a core on this shared machine.",
        ]
        big = str(max(int(s) for s in search["sizes"]))
        lines += ["", f"By query class at {big} memories:", ""]
        rows = []
        for tool, t in search["sizes"][big]["tools"].items():
            for cls, c in t["classes"].items():
                rows.append(
                    [tool, cls, c["n"], c["p50_ms"], c["p99_ms"], c["mean_ms"], c["cpu"]["p50_ms"], c["cpu"]["p99_ms"],
                     c["mean_hits"]]
                )  # fmt: skip
            st = t["stopword"]
            rows.append([tool, "stopword (apart)", st["n"], st["p50_ms"], st["p99_ms"], st["mean_ms"], "", "", ""])
        lines += [*_table(["tool", "class", "n", "p50", "p99", "mean", "CPU p50", "CPU p99", "mean hits"], rows), ""]

    base = res.get("baseline")
    if base and search:
        big = str(max(int(s) for s in search["sizes"]))
        before = base["search"]["sizes"].get(big)
        if before:
            rows = []
            for tool, t in search["sizes"][big]["tools"].items():
                b = before["tools"].get(tool)
                if not b:
                    continue
                rows.append(
                    [tool, b["all"]["p50_ms"], t["all"]["p50_ms"], b["all"]["p99_ms"], t["all"]["p99_ms"],
                     b["cpu"]["p99_ms"], t["cpu"]["p99_ms"], b["stopword"]["p50_ms"], t["stopword"]["p50_ms"]]
                )  # fmt: skip
            lines += [
                f"### Before / after, same run: the code of {base['revision']} ({base['commit']}) and this code, "
                f"at {big} memories",
                "",
                "The baseline was measured first, by its own `bench.run --only search` in a subprocess "
                f"({base['date']}), on the same corpus parameters and queries. ms; before → after.",
                "",
                *_table(
                    [
                        "tool",
                        "p50 before",
                        "p50 after",
                        "p99 before",
                        "p99 after",
                        "CPU p99 before",
                        "CPU p99 after",
                        "stopword p50 before",
                        "stopword p50 after",
                    ],
                    rows,
                ),
                "",
            ]

    strat = res.get("strategies")
    if strat and "all" in strat:
        rows = [
            [mode, name, strat[mode][name]["p50_ms"], strat[mode][name]["p90_ms"], strat[mode][name]["p99_ms"],
             strat[mode][name]["mean_ms"]]
            for mode in ("all", "any")
            for name in ("exhaustive", "bounded")
        ]  # fmt: skip
        lines += [
            f"### Bounded against exhaustive, same run, same index, at {strat['size']} memories",
            "",
            "`SqliteSearchIndex.search` as it is (*bounded*: the best postings of each key, the threshold "
            "algorithm) against the same index reading every posting of the query's keys (*exhaustive*: "
            f"what scoring every match costs); {strat['queries']} queries (the mix and 20 stopword queries) "
            "as memory_search asks them (`all`, limit 50) and as recall does (`any`, prefixes, limit 20), "
            "taking turns at going first.",
            "",
            *_table(["mode", "strategy", "p50", "p90", "p99", "mean"], rows),
            "",
        ]

    quality = res.get("quality")
    if quality:
        from bench.quality import markdown as quality_markdown

        lines += ["## Retrieval quality", "", *quality_markdown(quality)]
    nl = res.get("nl")
    if nl:
        from bench.nl_quality import markdown as nl_markdown

        lines += ["## Questions in plain language", "", *nl_markdown(nl)]

    add = res.get("add")
    if add:
        a = add["latency"]
        lines += [
            "## memory_add in process",
            "",
            f"{a['n']} sequential adds (mean {add['mean_content_bytes']} bytes) into a copy of the "
            f"{add['base_size']}-memory corpus: p50 {a['p50_ms']} ms, p99 {a['p99_ms']} ms, "
            f"**{add['throughput_per_s']} adds/s** on one thread.",
            "",
        ]
        if "words_only_latency" in add:
            w = add["words_only_latency"]
            lines += [
                f"The same adds, taking turns, by a service without an embedder (words only): p50 {w['p50_ms']} ms, "
                f"p99 {w['p99_ms']} ms; with the embedder ÷ without, p50: **{add['embedding_ratio_p50']}**.",
                "",
            ]

    overhead = res.get("overhead")
    if overhead:
        lines += [
            f"## Service overhead at {overhead['size']} memories",
            "",
            "The real Lambda handler (`functions.read.handler.lambda_handler`, API Gateway v2 event, "
            "Powertools Logger/Metrics writing to stdout as in Lambda) against the SELECTs it issued, "
            "re-run directly on the same connection, query by query, taking turns at going first.",
            "",
        ]
        rows = [
            [
                tool,
                t["handler"]["p50_ms"],
                t["handler"]["mean_ms"],
                t["bare_sql"]["p50_ms"],
                t["bare_sql"]["mean_ms"],
                t["ratio_of_totals"],
                t["ratio_of_p50"],
                t.get("added_ms_per_call", ""),
            ]
            for tool, t in overhead["tools"].items()
        ]
        lines += [
            *_table(
                [
                    "tool",
                    "handler p50",
                    "handler mean",
                    "bare SQL p50",
                    "bare SQL mean",
                    "ratio (totals)",
                    "ratio (p50)",
                    "added ms / call",
                ],
                rows,
            ),
            "",
        ]

    cold = res.get("coldstart")
    if cold:
        lines += [
            "## Cold start: import time in a fresh interpreter",
            "",
            f"Median of {cold['runs']} runs. *source*: no bytecode anywhere (what we assume Lambda does: "
            "`sam build` does not compile, and the code folders are read-only); *bytecode*: a warm "
            "`__pycache__`. Baseline: `bench/baseline_handler.py` (Powertools Logger, Tracer, Metrics, "
            "APIGatewayHttpResolver, `import boto3`).",
            "",
        ]
        modules = list(cold["modes"]["source"])
        rows = [
            [
                f"`{mod}`",
                cold["modes"]["source"][mod]["median_ms"],
                cold["modes"]["source"][mod]["ratio"],
                cold["modes"]["bytecode"][mod]["median_ms"],
                cold["modes"]["bytecode"][mod]["ratio"],
            ]
            for mod in modules
        ]
        lines += _table(["module", "source ms", "÷ baseline", "bytecode ms", "÷ baseline"], rows)
        lines += ["", "Where the time goes (source mode, `-X importtime` self time per package, ms):", ""]
        for mod, tops in cold["top_imports"].items():
            lines.append(f"- `{mod}`: " + ", ".join(f"{name} {ms}" for name, ms in tops))
        lines.append("")

    server = res.get("server")
    if server:
        lines += [
            f"## Local server under load (`mnemo serve`, {server['size']} memories, loopback)",
            "",
        ]
        rows = []
        for phase in ("search", "add"):
            p = server[phase]
            rows.append(
                [
                    p["tool"],
                    p["threads"],
                    p["requests"],
                    p["requests_per_s"],
                    p["latency"]["p50_ms"],
                    p["latency"]["p99_ms"],
                    p["statuses"],
                ]
            )
        lines += [*_table(["tool", "client threads", "requests", "req/s", "p50", "p99", "statuses"], rows), ""]

    agents = res.get("clients")
    if agents:
        from bench import clients

        lines += clients.markdown(agents)
        lines += [
            "Targets (same run):",
            "",
            *_table(["what", "target", "measured", "met"], clients.targets(agents)),
            "",
        ]

    cost = res.get("cost")
    if cost:
        lines += ["## Cost per call on AWS", ""]
        if cost.get("status") != "done":
            lines += [f"Not measured: {cost.get('reason')}.", ""]
        else:
            from bench.cost import markdown

            lines += markdown(cost)

    aws = res.get("aws")
    if aws:
        lines += ["## The AWS backend in process (moto + a real OpenSearch node)", ""]
        if aws.get("status") != "done":
            lines += [f"Not measured: {aws.get('reason')}.", ""]
        else:
            from bench import aws as aws_bench

            lines += aws_bench.markdown(aws)
    return "\n".join(lines) + "\n"
