"""The console's pictures in the docs, taken from a real ``mnemo serve`` and a real browser.

    python -m tests.support.screenshots docs/console      (make screenshots)

Starts a server on a fresh data folder, adds a few memories in English, Chinese and Japanese (the
first one rewritten once, replacing an older memory, so its page has a history), and saves one PNG
per main page. Nothing here is a test; the browser tests check the pages.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.support.browser import Browser
from tests.support.http import Server, request
from tests.support.server import start_server, stop_server

#: the memory the first of MEMORIES replaces (supersedes) when it is rewritten
REPLACED = {"content": "Deploys go out on Mondays before noon.", "kind": "decision", "path": "acme/ops/deploys"}

MEMORIES = [
    {
        "content": "Deploys go out on Tuesdays after 14:00 UTC; never on Fridays.",
        "was": "Deploys go out on Tuesdays.",
        "kind": "decision",
        "tags": ["release", "ops"],
        "path": "acme/ops/deploys",
    },
    {
        "content": "The staging database is refreshed from production every night at 02:00.",
        "kind": "fact",
        "tags": ["staging", "database"],
        "path": "acme/ops/databases",
    },
    {
        "content": "Reddit r/SaaS ignores self-promotion; reply with help first, link last.",
        "kind": "insight",
        "tags": ["reddit", "marketing"],
        "path": "acme/growth",
    },
    {
        "content": "数据库延迟很高，需要在订单服务前加缓存。",
        "kind": "insight",
        "tags": ["数据库", "性能"],
        "path": "acme/ops/databases",
    },
    {
        "content": "デプロイの前に必ずステージングで確認すること。",
        "kind": "decision",
        "tags": ["release"],
        "path": "acme/ops/deploys",
    },
    {
        "content": "Working on: the Q3 pricing page; waiting for legal on the refund wording.",
        "kind": "working",
        "tags": ["pricing"],
        "path": "acme/pricing",
    },
]


def _post(url: str, key: str, path: str, body: object) -> dict:
    reply = request(Server(url, key), "POST", path, body, timeout=10)
    if reply.status not in (200, 201):  # 201: a key created
        raise RuntimeError(f"{path}: {reply.status} {reply.raw[:500]!r}")
    return dict(reply.body)


def take(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-shots-") as tmp:
        server = start_server(Path(tmp) / "data")
        browser = Browser(width=1024, height=860)
        saved: list[Path] = []
        try:
            ids = []
            replaced = _post(server.url, server.key, "/v1/tools/memory_add", REPLACED)["memory"]["id"]
            for memory in MEMORIES:
                first = {name: value for name, value in memory.items() if name != "was"}
                first["content"] = memory.get("was", memory["content"])
                ids.append(_post(server.url, server.key, "/v1/tools/memory_add", first)["memory"]["id"])
                if "was" in memory:
                    rewrite = {"id": ids[-1], "content": memory["content"], "supersedes": [replaced]}
                    _post(server.url, server.key, "/v1/tools/memory_update", rewrite)
                time.sleep(0.01)
            _post(server.url, server.key, "/v1/admin/keys", {"label": "ci-bot", "scopes": ["memory:read"]})
            _post(server.url, server.key, "/v1/admin/keys", {"label": "claude-code", "scopes": ["memory:write"]})
            page = browser.page
            page.get(f"{server.url}/console")
            browser.wait_css("#signin-key")
            browser.page.save_screenshot(str(out / "signin.png"))
            saved.append(out / "signin.png")
            browser.type("#signin-key", server.key)
            browser.css("#signin button[type=submit]").click()
            browser.wait_css("#results[data-painted]")

            def shot(name: str) -> None:
                time.sleep(0.3)
                path = out / f"{name}.png"
                browser.page.save_screenshot(str(path))
                saved.append(path)

            shot("recent")
            browser.css("input[name=mode][value=forgiving]").click()
            browser.type("#search-q", "deploy database")
            browser.wait(lambda: browser.css("#results").get_attribute("data-query") == "deploy database")
            shot("search")
            browser.css("input[name=mode][value=list]").click()
            browser.js("location.hash = arguments[0]", f"#/memory/{ids[3]}")
            browser.wait_css("#edit-form")
            shot("memory")
            browser.js("location.hash = arguments[0]", f"#/memory/{ids[0]}")
            browser.wait_css("#history .version")
            browser.js("document.getElementById('history').scrollIntoView()")
            shot("history")
            browser.js("location.hash = '#/context'")
            browser.wait_css("#ctx-query")
            browser.type("#ctx-query", "deploys staging 数据库")
            browser.wait_text("#ctx-usage", "tokens")
            shot("context")
            browser.js("location.hash = '#/keys'")
            browser.wait_text("#keys", "ci-bot")
            shot("keys")
            browser.js("location.hash = '#/limits'")
            browser.wait_css("[data-bucket=search] .remaining")
            shot("limits")
            errors = browser.errors()
            if errors:
                raise SystemExit(f"the browser reported errors: {errors}")
        finally:
            browser.close()
            stop_server(server)
    return saved


if __name__ == "__main__":
    for path in take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/console")):
        print(f"{path} {path.stat().st_size // 1024} KiB")
