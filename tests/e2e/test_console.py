"""The memory console in a real headless Chromium against a real ``mnemo serve``.

One server and one browser for the module (starting Chromium costs about a second). After every
test the browser's log must hold no SEVERE entry — no console.error, no uncaught exception, no
Content-Security-Policy violation, no failed load — except the HTTP statuses the test itself
provokes (a 409 in the conflict test, a 429 in the rate-limit test), which it names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.select import Select

from tests.e2e.test_cli import mnemo
from tests.support import browser as chromium
from tests.support.http import NO_KEY, request
from tests.support.server import RunningServer, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.browser]

HOSTILE = "<img src=x onerror=alert(1)>"


def api(
    server: RunningServer, method: str, path: str, body: object = None, *, key: str | None = None
) -> tuple[int, dict]:
    reply = request(server, method, path, body, key=key or None, timeout=10)
    return reply.status, reply.body


def tool(server: RunningServer, name: str, key: str | None = None, **arguments: object) -> dict:
    status, body = api(server, "POST", f"/v1/tools/{name}", arguments, key=key)
    assert status == 200, body
    return body


@dataclass
class Console:
    server: RunningServer
    data_dir: Path
    browser: chromium.Browser
    #: log texts the current test expects (e.g. "409 (Conflict)")
    allowed: list[str] = field(default_factory=list)
    signed_in_as: str | None = None

    @property
    def b(self) -> chromium.Browser:
        return self.browser

    def open(self, hash_: str = "#/") -> None:
        """Load the console afresh at ``hash_`` (the key stays in the tab's sessionStorage)."""
        self.b.page.get("about:blank")  # a new document even when only the fragment differs
        self.b.page.get(f"{self.server.url}/console{hash_}")
        self.b.wait(lambda: self.b.all("#identity") or self.b.all("#signin"), what="the console to start")

    def go(self, hash_: str) -> None:
        """Navigate inside the running console, as a click on a link does."""
        self.b.js("location.hash = arguments[0]", hash_)

    def sign_in(self, key: str) -> None:
        if self.signed_in_as == key and self.b.all("#identity"):
            return
        self.open()
        if self.b.all("#signout"):
            self.b.css("#signout").click()
        self.b.wait_css("#signin-key")
        self.b.type("#signin-key", key)
        self.b.css("#signin button[type=submit]").click()
        self.b.wait_css("#identity")
        self.signed_in_as = key

    def search(self, text: str) -> list[str]:
        """Type into the search box (no Enter: results come as you type); the cards' texts once
        the answer for exactly ``text`` is painted."""
        # (each read waits: the results element is replaced when a paint lands, and an element
        # found just before may be stale by the time it is read — seen once under load)
        self.b.wait_css("#results[data-painted]")
        (before,) = self.b.wait(lambda: (int(self.b.css("#results").get_attribute("data-painted")),))
        box = self.b.css("#search-q")
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.DELETE)
        box.send_keys(text)
        self.b.js("arguments[0].dispatchEvent(new Event('input'))", box)  # also when nothing changed

        def painted() -> tuple[list[str]] | None:
            results = self.b.css("#results")
            if (
                int(results.get_attribute("data-painted") or 0) <= before
                or results.get_attribute("data-query") != text
                or results.get_attribute("aria-busy")
            ):
                return None
            cards = self.b.all("#results .memory-card")
            return ([card.find_element("css selector", ".content").text for card in cards],)

        (texts,) = self.b.wait(painted, what=f"the results for {text!r}")
        return texts

    @contextmanager
    def in_project(self, slug: str) -> Iterator[None]:
        """The console switched to project ``slug`` (created when missing) and back to the default
        one afterwards, so what a test saves there stays out of the other tests' lists and exports."""
        status, body = api(self.server, "POST", "/v1/admin/projects", {"slug": slug})
        assert status in (201, 409), body
        self.open()  # whoami again: the switcher offers the new project
        Select(self.b.wait_css("#project")).select_by_visible_text(slug)
        try:
            yield
        finally:
            switcher = Select(self.b.wait_css("#project"))
            default = next(o.text for o in switcher.options if o.text.endswith("(default)"))
            switcher.select_by_visible_text(default)
            self.open()


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    reason = chromium.missing()
    if reason:
        pytest.fail(reason, pytrace=False)
    data_dir = tmp_path_factory.mktemp("console")
    server = start_server(data_dir / "data")
    browser = chromium.Browser(downloads=data_dir / "downloads")
    try:
        yield Console(server, data_dir / "data", browser)
    finally:
        browser.close()
        stop_server(server)


@pytest.fixture
def c(console: Console) -> Iterator[Console]:
    """The console, with the browser log checked after the test."""
    console.b.clear_log()
    console.allowed = []
    yield console
    errors = console.b.errors(allow=console.allowed)
    assert errors == [], f"the browser reported errors: {errors}"


# ---- sign-in and what the key may do ---------------------------------------------------------


def test_signing_in_shows_what_the_key_may_do_and_keeps_the_key_in_session_storage_only(c):
    c.allowed = ["401 (Unauthorized)"]
    c.open()
    if c.b.all("#signout"):
        c.b.css("#signout").click()
    c.b.wait_css("#signin-key")
    c.b.type("#signin-key", "mnemo_not-a-key-0123456789")
    c.b.css("#signin button[type=submit]").click()
    assert "The key was refused" in c.b.wait_text("#notice", "refused")

    c.b.type("#signin-key", c.server.key)
    c.b.css("#signin button[type=submit]").click()
    identity = c.b.wait_css("#identity").text
    c.signed_in_as = c.server.key

    assert "admin" in identity and "default" in identity
    nav = [a.text for a in c.b.all("nav a")]
    assert nav == ["Memories", "Add", "Context preview", "This key", "Keys", "Projects", "Limits", "Export"]
    storage = c.b.js(
        "return [JSON.stringify(sessionStorage), JSON.stringify(localStorage), document.cookie, location.href]"
    )
    assert c.server.key in storage[0]
    assert c.server.key not in "".join(storage[1:])

    c.go("#/key")
    facts = c.b.wait_text("#key-facts", "Scopes")
    status, me = api(c.server, "GET", "/v1/whoami")
    assert status == 200
    assert me["workspace"]["id"] in facts and me["key"]["id"] in facts and "admin" in facts
    operations = [li.text for li in c.b.all("#key-operations li")]
    assert operations == me["operations"] and "admin_key_create" in operations


# ---- adding and finding ----------------------------------------------------------------------


def test_add_a_memory_then_find_it_as_you_type_in_english_and_chinese(c):
    c.sign_in(c.server.key)
    english = "Reddit r/SaaS ignores self-promo; reply with help first."
    chinese = "数据库延迟很高，需要加缓存"
    for content, kind, tags in ((english, "insight", "reddit, rules"), (chinese, "fact", "数据库")):
        c.go("#/add")
        c.b.wait_css("#add-content")
        c.b.type("#add-content", content)
        c.b.type("#add-kind", kind)
        c.b.type("#add-tags", tags)
        c.b.css("#add-save").click()
        c.b.wait_text("#memory-content", content[:4])
        assert c.b.text("#memory-content") == content
        memory_id = c.b.text("#memory-id")
        stored = tool(c.server, "memory_get", id=memory_id)["memory"]
        assert (stored["content"], stored["kind"], stored["version"]) == (content, kind, 1)

    c.go("#/")
    assert c.search("reddit") == [english]
    assert c.search("延迟") == [chinese]
    assert c.search("缓存 数据库") == [chinese]
    assert c.search("")[:2] == [chinese, english]  # an empty query lists the newest first

    japanese, korean = "デプロイの前にステージングで確認する", "데이터베이스 지연이 높다"
    for content in (japanese, korean):
        tool(c.server, "memory_add", content=content)
    assert c.search("ステージング") == [japanese]
    assert c.search("데이터베이스") == [korean]


def test_a_refused_add_is_explained_in_words_and_stores_nothing(c):
    c.allowed = ["400 (Bad Request)", "413 (Request Entity Too Large)"]
    c.sign_in(c.server.key)
    before = len(tool(c.server, "memory_search", q="", limit=100)["memories"])
    c.go("#/add")
    c.b.wait_css("#add-content")
    c.b.type("#add-content", "fine content")
    c.b.type("#add-kind", "k" * 65)
    c.b.css("#add-save").click()
    notice = c.b.wait_text("#notice", "refused")

    assert "The request was refused: invalid arguments" in notice
    assert "kind: String should have at most 64 characters" in notice
    c.b.css("#add-kind").clear()
    c.b.js("document.getElementById('add-content').value = arguments[0]", "数" * 1366)  # 4098 bytes of UTF-8
    c.b.js("document.getElementById('add-content').dispatchEvent(new Event('input'))")
    assert "4098 / 4096 bytes" in c.b.text("#add-form")
    c.b.css("#add-save").click()
    assert "Too large" in c.b.wait_text("#notice", "Too large")
    assert len(tool(c.server, "memory_search", q="", limit=100)["memories"]) == before


def test_the_recent_list_is_newest_first_like_the_api(c):
    c.sign_in(c.server.key)
    for n in range(3):
        tool(c.server, "memory_add", content=f"ordering check number {n}")
    c.open("#/")
    shown = c.search("")

    listed = [m["content"] for m in tool(c.server, "memory_search", q="", limit=50)["memories"]]
    assert shown == listed and shown[0] == "ordering check number 2"
    assert "newest first" in c.b.text("#results-summary")


def test_strict_and_forgiving_lookups_explain_which_words_matched_where(c):
    c.sign_in(c.server.key)
    tool(c.server, "memory_add", content="Deployment window is Tuesday", tags=["release"], path="ops/deploys")
    c.open("#/")

    c.b.css("input[name=mode][value=strict]").click()
    assert c.search("deployment tuesday") == ["Deployment window is Tuesday"]
    explanation = c.b.text("#results .explanation")
    assert "Matched" in explanation and "deployment" in explanation and "tuesday" in explanation
    assert "Why: rank 1" in explanation
    assert [m.text for m in c.b.all("#results mark")] == ["Deployment", "Tuesday"]

    assert c.search("deployment zebra") == []
    assert "zebra" in c.b.text("#no-match")

    c.b.css("input[name=mode][value=forgiving]").click()
    assert c.search("deploy zebra") == ["Deployment window is Tuesday"]  # any word, prefixes too
    assert "not in this memory zebra" in c.b.text("#results .explanation")
    c.b.css("input[name=mode][value=list]").click()


def test_filters_narrow_by_kind_tags_path_and_time_window_where_the_server_takes_them(c):
    c.sign_in(c.server.key)
    tool(c.server, "memory_add", content="filterable alpha", kind="decision", tags=["fx", "one"], path="acme/a")
    tool(c.server, "memory_add", content="filterable beta", kind="note", tags=["fx"], path="other/b")
    c.open("#/")
    c.b.css("input[name=mode][value=list]").click()

    c.b.type("#f-kind", "decision")
    assert c.search("filterable") == ["filterable alpha"]
    c.b.css("#f-kind").clear()
    c.b.type("#f-tags", "fx, one")
    assert c.search("filterable") == ["filterable alpha"]
    c.b.css("#f-tags").clear()
    assert sorted(c.search("filterable")) == ["filterable alpha", "filterable beta"]

    c.b.css("input[name=mode][value=strict]").click()
    assert c.b.css("[data-filter=f-path]").is_displayed() and not c.b.css("[data-filter=f-tags]").is_displayed()
    c.b.type("#f-path", "acme/%")
    assert c.search("filterable") == ["filterable alpha"]
    c.b.css("#f-path").clear()
    c.b.type("#f-kind", "note")
    assert c.search("filterable") == ["filterable beta"]
    c.b.css("#f-kind").clear()

    # the time window (updated_after / updated_before) is offered exactly when the server's
    # OpenAPI document says the tool takes it
    schemas = request(c.server, "GET", "/openapi.json", key=NO_KEY).body["components"]["schemas"]
    takes_window = "updated_after" in schemas["SearchMemoryArgs"]["properties"]
    assert c.b.css("[data-filter=f-after]").is_displayed() is takes_window
    if takes_window:
        c.b.js(
            "const f = document.getElementById('f-after'); f.value = '2999-01-01T00:00';"
            "f.dispatchEvent(new Event('input', {bubbles: true}));"
        )
        assert c.search("filterable") == []
        c.b.js("const f = document.getElementById('f-after'); f.value = ''; f.dispatchEvent(new Event('input'));")
        assert len(c.search("filterable")) == 2
    c.b.css("input[name=mode][value=list]").click()


# ---- a memory's page -------------------------------------------------------------------------


def test_editing_with_a_version_conflict_says_so_and_saves_on_top_of_the_new_version(c):
    c.allowed = ["409 (Conflict)"]
    c.sign_in(c.server.key)
    memory = tool(c.server, "memory_add", content="the first wording")["memory"]
    c.open(f"#/memory/{memory['id']}")
    c.b.wait_css("#edit-content")
    c.b.type("#edit-content", "my careful rewording")

    tool(c.server, "memory_update", id=memory["id"], content="someone else's wording")  # now version 2
    c.b.css("#save").click()

    conflict = c.b.wait_text("#conflict", "Someone else changed this memory first")
    assert "version 1" in conflict
    assert c.b.css("#edit-content").get_attribute("value") == "my careful rewording"  # nothing lost
    assert tool(c.server, "memory_get", id=memory["id"])["memory"]["content"] == "someone else's wording"

    c.b.css("#reload-latest").click()
    c.b.wait_text("#memory-version", "2")
    assert c.b.text("#memory-content") == "someone else's wording"
    c.b.css("#save").click()
    c.b.wait_text("#memory-version", "3")

    stored = tool(c.server, "memory_get", id=memory["id"])["memory"]
    assert (stored["content"], stored["version"]) == ("my careful rewording", 3)
    assert "Saved: version 3" in c.b.text("#notice")


def test_deleting_a_memory_asks_first_and_then_it_is_gone(c):
    c.allowed = ["404 (Not Found)"]
    c.sign_in(c.server.key)
    memory = tool(c.server, "memory_add", content="a memory to prune")["memory"]
    c.open(f"#/memory/{memory['id']}")
    c.b.wait_css("#delete").click()
    c.b.wait_css("#delete-cancel").click()
    assert tool(c.server, "memory_get", id=memory["id"])["memory"]["id"] == memory["id"]

    c.b.wait_css("#delete").click()
    c.b.wait_css("#delete-confirm").click()
    c.b.wait_text("#notice", f"Deleted {memory['id']}")

    assert api(c.server, "POST", "/v1/tools/memory_get", {"id": memory["id"]})[0] == 404
    c.open(f"#/memory/{memory['id']}")
    assert "Not found" in c.b.wait_text("#notice", "Not found")


def test_copy_reference_puts_the_id_on_the_clipboard(c):
    c.sign_in(c.server.key)
    memory = tool(c.server, "memory_add", content="copy my reference")["memory"]
    c.b.page.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": c.server.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    c.open(f"#/memory/{memory['id']}")
    c.b.wait_css(".copy").click()
    c.b.wait_text(".copy", "Copied")

    pasted = c.b.page.execute_async_script("navigator.clipboard.readText().then(arguments[0])")
    assert pasted == memory["id"]


def supersede_a_twice_updated_memory(server: RunningServer, project: str, word: str) -> tuple[dict, dict]:
    """In ``project``, a memory updated twice (versions 1 to 3) and then superseded by a new one
    (its version 4): the old one's record and the new one's."""
    at = {"project": project}
    old = tool(server, "memory_add", content=f"the {word} deploy runs on mondays", kind="fact", **at)["memory"]
    tool(server, "memory_update", id=old["id"], content=f"the {word} deploy runs on tuesdays", tags=["ops"], **at)
    tool(server, "memory_update", id=old["id"], content=f"the {word} deploy runs on wednesdays", **at)
    new = tool(server, "memory_add", content=f"the {word} deploy runs on fridays", supersedes=[old["id"]], **at)
    return tool(server, "memory_get", id=old["id"], **at)["memory"], new["memory"]


def test_a_memorys_page_shows_its_history_newest_first_and_links_its_supersession_chain(c):
    c.sign_in(c.server.key)

    def versions() -> list[tuple[str, str]] | None:
        items = c.b.all("#history .version")
        return [(i.get_attribute("data-version"), i.find_element("css selector", "pre").text) for i in items] or None

    with c.in_project("chains"):
        old, new = supersede_a_twice_updated_memory(c.server, "chains", "quokka")
        assert (old["version"], old["superseded_by"]) == (4, new["id"])
        c.go(f"#/memory/{old['id']}")
        shown = c.b.wait(versions, what="the history")
        assert shown == [
            ("3", "the quokka deploy runs on wednesdays"),  # kept by the supersession mark (version 4)
            ("2", "the quokka deploy runs on tuesdays"),
            ("1", "the quokka deploy runs on mondays"),
        ]
        assert "tags —" in c.b.text("#history .version[data-version='1'] .differs")  # v2 added the tag
        assert c.b.all("#history .version[data-version='2'] .differs") == []  # v3 changed the content only
        assert c.b.all("#history-dropped") == []
        assert "superseded" in c.b.text("#memory-status")
        assert [a.text for a in c.b.all("#replaced-by a")] == [new["id"]]

        c.b.css("#replaced-by a").click()
        c.b.wait_text("#memory-id", new["id"])
        replaces = c.b.wait(lambda: c.b.all("#replaces a"), what="what it replaces")
        assert [a.text for a in replaces] == [old["id"]]
        assert c.b.text("#memory-status") == ""  # the current one is not marked
        assert c.b.text("#no-versions") == "No earlier versions."

        replaces[0].click()
        c.b.wait_text("#memory-id", old["id"])
        assert c.b.wait(versions, what="the old memory's history again") == shown


def test_superseded_memories_are_listed_marked_only_when_asked_for(c):
    c.sign_in(c.server.key)

    def painted_with_superseded(wanted: bool) -> list[str] | None:
        results = c.b.css("#results")
        if results.get_attribute("data-superseded") != str(wanted).lower() or results.get_attribute("aria-busy"):
            return None
        return [card.get_attribute("data-id") for card in c.b.all("#results .memory-card")]

    with c.in_project("chains"):
        old, new = supersede_a_twice_updated_memory(c.server, "chains", "wombat")
        c.go("#/")
        for mode in ("list", "strict", "forgiving"):
            c.b.css(f"input[name=mode][value={mode}]").click()
            assert c.search("wombat") == [new["content"]], mode  # left out by default
            c.b.css("#show-superseded").click()
            listed = c.b.wait(lambda: painted_with_superseded(True), what=f"the {mode} results with superseded ones")
            assert sorted(listed) == sorted([old["id"], new["id"]]), mode
            marked = c.b.css(f"#results .memory-card[data-id='{old['id']}']")
            assert "superseded" in marked.get_attribute("class").split()
            assert "superseded" in marked.find_element("css selector", ".badge").text
            assert c.b.all(f"#results .memory-card[data-id='{new['id']}'] .badge") == []
            c.b.css("#show-superseded").click()
            c.b.wait(lambda: painted_with_superseded(False) == [new["id"]], what=f"the {mode} results without them")
        c.b.css("input[name=mode][value=list]").click()


def test_the_context_preview_shows_the_block_and_its_token_count(c):
    c.sign_in(c.server.key)
    tool(c.server, "memory_add", content="Invoices are sent on the first business day", kind="fact")
    c.open("#/context")
    c.b.type("#ctx-query", "invoices business")
    c.b.type("#ctx-max-tokens", "300")
    usage = c.b.wait_text("#ctx-usage", "of 300 tokens")

    expected = tool(c.server, "recall_context", query="invoices business", max_tokens=300, max_items=10)
    assert usage.startswith(f"{expected['used_tokens']} of 300 tokens")
    assert c.b.text("#ctx-block") == expected["context"].strip()
    assert [a.text for a in c.b.all("#ctx-refs a")] == expected["references"]


# ---- hostile content -------------------------------------------------------------------------


def test_markup_in_a_memory_is_shown_as_text_and_runs_nothing(c):
    c.sign_in(c.server.key)
    memory = tool(
        c.server, "memory_add", content=HOSTILE, tags=["<b>bold</b>"], path="<script>alert(2)</script>", kind="x"
    )["memory"]
    c.open("#/")
    assert c.search("img onerror") == [HOSTILE]
    card = c.b.css(f"#results [data-id='{memory['id']}']")
    assert "<b>bold</b>" in card.text and "<script>alert(2)</script>" in card.text

    c.b.css("input[name=mode][value=strict]").click()
    assert c.search("img onerror") == [HOSTILE]  # explain's highlighting builds nodes, not markup
    c.b.css("input[name=mode][value=list]").click()

    c.open(f"#/memory/{memory['id']}")
    assert c.b.wait_text("#memory-content", "img") == HOSTILE
    assert c.b.css("#edit-content").get_attribute("value") == HOSTILE
    injected = c.b.js("return document.querySelectorAll('#app img, #app script, #app b, #app iframe').length")
    assert injected == 0
    with pytest.raises(NoAlertPresentException):
        c.b.page.switch_to.alert.text  # noqa: B018 - reading it is the check


# ---- keys and scopes -------------------------------------------------------------------------


def test_creating_a_key_shows_its_secret_once(c):
    c.allowed = ["401 (Unauthorized)"]
    c.sign_in(c.server.key)
    c.go("#/keys")
    c.b.wait_css("#key-label")
    c.b.type("#key-label", "console-made")
    c.b.css("input[name=scope][value='memory:write']").click()
    c.b.css("#key-create").click()
    secret = c.b.wait(lambda: c.b.css("#new-secret").get_attribute("value"), what="the new secret")

    status, me = api(c.server, "GET", "/v1/whoami", key=secret)
    assert status == 200 and me["key"]["label"] == "console-made"
    assert sorted(me["key"]["scopes"]) == ["memory:read", "memory:write"]
    c.b.wait_text("#keys", "console-made")
    row = c.b.css(f"#keys tr[data-key-id='{me['key']['id']}']").text
    assert secret not in row

    c.b.css("#secret-done").click()
    assert secret not in c.b.page.page_source
    c.go("#/")
    c.go("#/keys")
    c.b.wait_text("#keys", "console-made")
    assert secret not in c.b.page.page_source
    assert secret not in c.b.js("return JSON.stringify(sessionStorage) + JSON.stringify(localStorage)")

    c.b.css(f"#keys tr[data-key-id='{me['key']['id']}'] .revoke").click()
    c.b.css(f"#keys tr[data-key-id='{me['key']['id']}'] .revoke-confirm").click()
    c.b.wait(lambda: "revoked" in c.b.css(f"#keys tr[data-key-id='{me['key']['id']}']").get_attribute("class"))
    assert api(c.server, "GET", "/v1/whoami", key=secret)[0] == 401


def test_revoking_the_consoles_own_key_signs_it_out(c):
    status, created = api(c.server, "POST", "/v1/admin/keys", {"label": "short-lived", "scopes": ["admin"]})
    assert status == 201
    c.sign_in(created["secret"])
    c.go("#/keys")
    row = f"#keys tr[data-key-id='{created['key']['id']}']"
    c.b.wait_css(f"{row} .revoke").click()
    c.b.css(f"{row} .revoke-confirm").click()

    assert "You revoked the key this console was using" in c.b.wait_text("#notice", "revoked")
    assert c.b.all("#signin-key") and not c.b.all("#identity")
    assert c.b.js("return sessionStorage.length") == 0
    c.signed_in_as = None


def test_a_read_only_key_sees_no_write_controls(c):
    status, created = api(c.server, "POST", "/v1/admin/keys", {"label": "reader", "scopes": ["memory:read"]})
    assert status == 201
    memory = tool(c.server, "memory_add", content="readers may look but not touch")["memory"]
    c.sign_in(created["secret"])

    assert [a.text for a in c.b.all("nav a")] == ["Memories", "Context preview", "This key"]
    assert "readers may look but not touch" in c.search("touch")
    c.open(f"#/memory/{memory['id']}")
    c.b.wait_text("#memory-content", "readers")
    assert c.b.all(".copy")  # reading controls stay
    write_controls = "#edit-form, #delete, #add-form, #key-form, #project-form, a[href='#/add'], a[href='#/keys']"
    assert c.b.all(write_controls) == []
    for page in ("#/add", "#/keys", "#/projects", "#/limits", "#/export"):
        c.open(page)
        assert "may not open this page" in c.b.wait_css("#view").text
        assert c.b.all(write_controls) == []
    c.b.css("#signout").click()
    c.signed_in_as = None


def test_a_delete_only_key_starts_on_its_own_page(c):
    status, created = api(c.server, "POST", "/v1/admin/keys", {"label": "pruner", "scopes": ["memory:delete"]})
    assert status == 201
    c.sign_in(created["secret"])

    assert [a.text for a in c.b.all("nav a")] == ["This key"]
    assert "memory:delete" in c.b.wait_text("#key-facts", "Scopes")
    assert [li.text for li in c.b.all("#key-operations li")] == ["memory_delete", "forget", "whoami"]
    c.b.css("#signout").click()
    c.signed_in_as = None


# ---- administration --------------------------------------------------------------------------


def test_projects_are_created_and_switched_between(c):
    c.sign_in(c.server.key)
    c.go("#/projects")
    c.b.wait_css("#project-slug")
    c.b.type("#project-slug", "side-project")
    c.b.css("#project-create").click()
    c.b.wait_text("#projects", "side-project")

    select = c.b.css("#project")
    options = c.b.wait(lambda: [o for o in select.find_elements("css selector", "option") if o.text == "side-project"])
    options[0].click()
    c.go("#/add")
    c.b.wait_css("#add-content")
    c.b.type("#add-content", "lives in the side project")
    c.b.css("#add-save").click()
    c.b.wait_text("#memory-content", "side project")

    there = tool(c.server, "memory_search", q="side", project="side-project")["memories"]
    assert [m["content"] for m in there] == ["lives in the side project"]
    assert tool(c.server, "memory_search", q="lives side")["memories"] == []  # not in the default project
    c.b.css("#project option[value]").click()  # back to the first project (the default)


def test_limits_show_the_buckets_current_levels(c):
    c.sign_in(c.server.key)
    c.open("#/limits")
    c.b.wait_css("[data-bucket=search] .remaining")

    search = int(c.b.text("[data-bucket=search] .remaining"))
    status, limits = api(c.server, "GET", "/v1/admin/limits")
    assert status == 200
    assert limits["levels"]["search"]["remaining"] <= search <= limits["search"]
    assert f"of {limits['write']} calls left" in c.b.text("[data-bucket=write]")


def test_export_downloads_json_lines_that_mnemo_import_reads_back(c):
    c.sign_in(c.server.key)
    expected = tool(c.server, "memory_search", q="", limit=100)["memories"]
    for old in c.b.downloads.glob("*"):
        old.unlink()
    c.open("#/export")
    c.b.wait_css("#export-start").click()
    c.b.wait_text("#export-status", "Exported")
    files = c.b.wait(lambda: list(c.b.downloads.glob("*.jsonl")), what="the download")

    lines = files[0].read_text(encoding="utf-8").splitlines()
    assert files[0].name == "mnemo-default.jsonl"
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(m["id"] for m in expected)
    assert mnemo(c.data_dir, "project", "create", "copy").code == 0
    imported = mnemo(c.data_dir, "--json", "import", "--project", "copy", "--input", str(files[0]))
    assert imported.code == 0, imported.err
    assert imported.json()["imported"] == len(expected)


def test_a_rate_limit_says_how_long_to_wait(c):
    c.allowed = ["429 (Too Many Requests)"]
    created = mnemo(c.data_dir, "--json", "workspace", "create", "throttled", "--admin-key")
    assert created.code == 0, created.err
    workspace = created.json()["workspace"]["id"]
    assert mnemo(c.data_dir, "limits", "set", "--workspace", workspace, "--write", "1").code == 0
    c.sign_in(created.json()["admin_key"]["secret"])

    for attempt in ("first", "second"):
        c.go("#/add")
        c.b.wait_css("#add-content")
        c.b.type("#add-content", f"{attempt} write of the minute")
        c.b.css("#add-save").click()
        if attempt == "first":
            c.b.wait_css("#memory-content")
    notice = c.b.wait_text("#notice", "Try again in")

    assert "Rate limit reached" in notice
    seconds = int(notice.split("Try again in ")[1].split(" s")[0])
    assert 1 <= seconds <= 60
    assert c.b.css("#notice [data-code]").get_attribute("data-code") == "rate_limited"
    c.b.css("#signout").click()
    c.signed_in_as = None


def test_every_page_opens_without_a_browser_error(c):
    c.sign_in(c.server.key)
    memory = tool(c.server, "memory_add", content="a page to open")["memory"]
    pages = ("#/", "#/add", "#/context", "#/key", "#/keys", "#/projects", "#/limits", "#/export")
    for page in (*pages, f"#/memory/{memory['id']}"):
        c.open(page)
        c.b.wait(lambda: c.b.css("#view").text.strip(), what=f"{page} to render")
        assert c.b.errors() == [], page
