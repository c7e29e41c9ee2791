"""The console's files (shared/mnemo/api/console/) and how the read function serves them: strict
security headers on every answer, revalidation by ETag, nothing that parses user data as HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mnemo.api.routers.console import CONTENT_SECURITY_POLICY, SECURITY_HEADERS, assets
from mnemo.local.server import LocalContext

CONSOLE = Path(__file__).resolve().parents[2] / "shared" / "mnemo" / "api" / "console"


def _get(path: str, headers: dict[str, str] | None = None) -> dict:
    from functions.read.handler import lambda_handler

    event = {
        "version": "2.0",
        "routeKey": "GET /console/{asset}" if path.count("/") > 1 else "GET /console",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": "localhost", **(headers or {})},
        "requestContext": {
            "http": {"method": "GET", "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "r",
            "routeKey": "GET /console",
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }
    return lambda_handler(event, LocalContext("ReadFunction"))


def test_the_package_serves_every_file_of_the_console_folder():
    on_disk = {p.name for p in CONSOLE.iterdir() if p.is_file()}

    assert set(assets()) == on_disk
    assert {"index.html", "app.js", "console.css", "favicon.svg"} <= on_disk


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/console", "text/html; charset=utf-8"),
        ("/console/app.js", "text/javascript; charset=utf-8"),
        ("/console/console.css", "text/css; charset=utf-8"),
        ("/console/favicon.svg", "image/svg+xml"),
    ],
)
def test_every_console_answer_carries_the_security_headers(wired_runtime, path, content_type):
    response = _get(path)

    headers = response["headers"]
    assert response["statusCode"] == 200
    assert headers["Content-Type"] == content_type
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value, name
    assert headers["Cache-Control"] == "no-cache" and headers["ETag"].startswith('"')


def test_the_policy_allows_no_inline_script_or_style_and_no_framing():
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))

    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["form-action"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY and "data:" not in CONTENT_SECURITY_POLICY
    assert SECURITY_HEADERS["X-Content-Type-Options"] == "nosniff"


def test_an_unchanged_file_is_revalidated_with_a_bodiless_304(wired_runtime):
    first = _get("/console/app.js")
    again = _get("/console/app.js", {"if-none-match": first["headers"]["ETag"]})
    changed = _get("/console/app.js", {"if-none-match": '"something-else"'})

    assert (again["statusCode"], again["body"]) == (304, "")
    assert again["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert changed["statusCode"] == 200 and changed["body"] == first["body"]


@pytest.mark.parametrize("name", ["nope.js", "index.html", "..%2Fhandler.py", "app.py", "APP.JS"])
def test_a_file_the_console_does_not_have_is_404_with_the_same_headers(wired_runtime, name):
    response = _get(f"/console/{name}")

    assert response["statusCode"] == 404
    assert json.loads(response["body"])["code"] == "not_found"
    assert response["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response["headers"]["X-Content-Type-Options"] == "nosniff"


def test_the_html_has_no_inline_script_style_or_handlers():
    html = (CONSOLE / "index.html").read_text()

    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "<style" not in html and " style=" not in html
    assert not re.search(r"\son[a-z]+\s*=", html)
    # relative URLs only, so the console works behind an API Gateway stage prefix (/prod/console)
    assert re.findall(r'(?:src|href)="([^"]*)"', html) and all(
        not url.startswith(("/", "http:", "https:")) for url in re.findall(r'(?:src|href)="([^"]*)"', html)
    )


@pytest.mark.parametrize("path", sorted(CONSOLE.glob("*.js")), ids=lambda p: p.name)
def test_the_scripts_never_parse_strings_as_html_or_code(path):
    # comments may name what the code avoids; the code may not use it
    source = re.sub(r"/\*.*?\*/|^\s*//.*$", "", path.read_text(), flags=re.S | re.M)

    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc"):
        assert sink not in source.replace('"srcdoc"', ""), f"{path.name} uses {sink}"
    assert "localStorage" not in source, "the key belongs in sessionStorage only"
    assert not re.search(r"""fetch\(\s*["'`]/""", source), "API URLs are relative to the page"
    assert "console.log" not in source, "nothing the console holds is logged"


ROOT = CONSOLE.parents[3]


def test_the_console_pictures_are_small_pngs_and_the_readme_shows_one():
    pictures = sorted((ROOT / "docs" / "console").glob("*.png"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    assert {p.stem for p in pictures} >= {"recent", "search", "memory", "context", "keys", "limits"}
    for picture in pictures:
        data = picture.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), picture.name
        assert len(data) < 200 * 1024, f"{picture.name} is {len(data) // 1024} KiB"
    assert re.search(r"!\[[^\]]+\]\(docs/console/[a-z]+\.png\)", readme)


def test_no_tracked_file_is_over_one_mebibyte():
    import subprocess

    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    )
    large = [name for name in tracked if name and (ROOT / name).is_file() and (ROOT / name).stat().st_size > 1 << 20]
    assert large == []
