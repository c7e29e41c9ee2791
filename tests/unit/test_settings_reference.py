"""One source of configuration: every ``MNEMO_*`` variable the code reads is a field of
``Settings``, listed in docs/configuration.md's generated table; nothing but ``mnemo.config`` (and
the hook's standard-library reader, ``mnemo.clientconfig``) reads them from the environment, and
nothing writes them there."""

from __future__ import annotations

import re
from pathlib import Path

from mnemo import clientconfig
from mnemo.config import NOT_SETTINGS, NOT_SETTINGS_PREFIXES, Settings, unknown_variables

from scripts import settings_reference as reference

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION_MD = ROOT / "docs" / "configuration.md"
VARIABLE = re.compile(r"\bMNEMO_[A-Z0-9_]*[A-Z0-9]\b")
#: where Mnemo's own code lives, and the code around it that may name variables (tests, tooling)
PRODUCT = ("shared", "functions")
AROUND = ("tests", "scripts", "bench", "Makefile", "template.yaml", "README.md", "docs")
#: names misspelt on purpose (the tests and the docs of the warning)
MISSPELT = {"MNEMO_NOT_A_SETTING", "MNEMO_EMBEDER", "MNEMO_HOOK_OF", "MNEMO_QWXZ"}


def test_the_committed_table_is_what_the_generator_makes_of_the_settings():
    committed = CONFIGURATION_MD.read_text(encoding="utf-8")

    assert reference.update(committed) == committed, "docs/configuration.md is out of date: run `make docs`"


def test_every_setting_has_a_row_that_says_what_it_does():
    table = reference.render()

    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(MNEMO_\w+)` \|.*\| ([^|]*) \|$", table, re.M)}

    assert sorted(rows) == sorted(f"MNEMO_{name.upper()}" for name in Settings.model_fields)
    assert [name for name, text in rows.items() if not text.strip()] == []


def _sources(parts: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        path = ROOT / part
        if path.is_file():
            found.append(path)
        else:
            found += [p for p in path.rglob("*") if p.is_file() and p.suffix in {".py", ".sh", ".md", ".yaml", ".json"}]
    return [p for p in found if "node_modules" not in p.parts and ".venv" not in p.parts]


def test_every_mnemo_variable_named_in_the_repository_is_a_setting_or_declared_tooling():
    known = {f"MNEMO_{name.upper()}" for name in Settings.model_fields} | set(NOT_SETTINGS)
    named: dict[str, str] = {}
    for path in _sources(PRODUCT + AROUND):
        for name in VARIABLE.findall(path.read_text(encoding="utf-8", errors="replace")):
            named.setdefault(name, str(path.relative_to(ROOT)))

    unknown = {
        name: where
        for name, where in named.items()
        if name not in known and not name.startswith(NOT_SETTINGS_PREFIXES) and name not in MISSPELT
    }

    assert unknown == {}


def test_only_the_settings_modules_read_the_environment_and_nothing_writes_mnemo_variables():
    reads, writes = [], []
    for path in _sources(PRODUCT):
        if path.suffix != ".py":
            continue
        where = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        if re.search(r"environ\.get\(\s*['\"]MNEMO_|getenv\(\s*['\"]MNEMO_|environ\[\s*['\"]MNEMO_", text):
            reads.append(where)
        if re.search(r"environ\[[^\]]+\]\s*=[^=]|environ\.(setdefault|update|pop)\(|putenv\(", text):
            writes.append(where)

    assert reads == []
    # the one write left: defaults of libraries configured only by their environment (never MNEMO_*)
    assert writes == ["shared/mnemo/local/cli/__init__.py"]
    from mnemo.local.cli import LIBRARY_DEFAULTS

    assert not any(name.startswith("MNEMO_") for name in LIBRARY_DEFAULTS)


def test_the_hook_reads_the_fields_settings_inherits_under_the_same_names():
    hook_names = clientconfig.names()

    assert set(hook_names.values()) <= set(Settings.model_fields)
    assert {"MNEMO_URL", "MNEMO_KEY", "MNEMO_PROJECT", "MNEMO_HOOK_OFF"} <= set(hook_names)
    for field in hook_names.values():
        default = getattr(clientconfig.ClientSettings, field)
        model_default = Settings.model_fields[field].default
        assert model_default == default or (field == "key" and model_default is None and default == "")


def test_the_hook_reader_parses_like_settings_and_keeps_the_default_for_what_it_cannot_parse():
    env = {
        "MNEMO_HOOK_PROMPT_TOKENS": "50",
        "mnemo_hook_min_similarity": "0.6",
        "MNEMO_HOOK_STATE_DIR": "/tmp/marks",
        "MNEMO_HOOK_SESSION_TOKENS": "lots",
        "MNEMO_PROJECT": "  ",
    }

    cfg = clientconfig.read(env)

    assert (cfg.hook_prompt_tokens, cfg.hook_min_similarity, cfg.hook_state_dir) == (50, 0.6, Path("/tmp/marks"))
    assert (cfg.hook_session_tokens, cfg.project) == (1200, None)
    model = Settings.model_validate({k.lower().removeprefix("mnemo_"): v for k, v in env.items() if v != "lots"})
    assert (model.hook_prompt_tokens, model.hook_min_similarity, model.hook_state_dir, model.project) == (
        50,
        0.6,
        Path("/tmp/marks"),
        None,
    )


def test_an_unknown_variable_is_one_line_naming_the_closest_setting_and_tooling_is_exempt():
    environ = {
        "MNEMO_HOOK_OF": "Stop",
        "MNEMO_QWXZ": "1",
        "MNEMO_REQUIRE_OPENSEARCH": "1",
        "MNEMO_SAM": "x",
        "HOME": "/",
    }

    lines = unknown_variables(environ)

    assert lines == [
        "mnemo: warning: MNEMO_HOOK_OF is not a Mnemo setting and is ignored; did you mean MNEMO_HOOK_OFF?",
        "mnemo: warning: MNEMO_QWXZ is not a Mnemo setting and is ignored (docs/configuration.md lists the settings)",
    ]


def test_a_function_logs_each_unknown_variable_once_when_it_reads_its_settings(monkeypatch):
    from mnemo import observability, runtime

    seen: list[str] = []
    monkeypatch.setattr(observability.logger, "warning", lambda message, *args, **kwargs: seen.append(message))
    monkeypatch.setenv("MNEMO_EMBEDER", "none")
    runtime.use(None)
    try:
        runtime.settings()
        runtime.settings()  # read once per process: no second warning
    finally:
        runtime.use(None)

    assert seen == ["mnemo: warning: MNEMO_EMBEDER is not a Mnemo setting and is ignored; did you mean MNEMO_EMBEDDER?"]
