"""The CLI's messages and exit codes, run in-process (``mnemo.local.cli.main``) for speed;
tests/e2e/test_cli.py runs it as a subprocess."""

from __future__ import annotations

import json
import os

import pytest
from mnemo import runtime


@pytest.mark.parametrize(
    ("args", "stdin", "code", "needle"),
    [
        (["bogus"], None, 2, "invalid choice"),
        (["key", "create", "--label", "x"], None, 2, "--scope"),
        (["limits", "set"], None, 2, "--search"),
        (["limits", "set", "--default", "--write", "3"], None, 2, "--default"),
        (["key", "revoke", "key_0000"], None, 1, "no key"),
        (["key", "create", "--label", "x", "--scope", "root"], None, 1, "scopes"),
        (["key", "create", "--label", "x", "--scope", "admin", "--project", "nope"], None, 1, "no project"),
        (["limits", "set", "--write", "0"], None, 1, "write"),
        (["import"], "{not json\n", 1, "input line 1"),
        (["import"], '{"id": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"}\n', 1, "input line 1"),
        (["import", "-i", "/nonexistent/file.jsonl"], None, 1, "/nonexistent/file.jsonl"),
        (["project", "create", "Bad Slug"], None, 1, "slug"),
        (["project", "create", "default"], None, 1, "exists"),
        (["export", "--project", "nope"], None, 1, "no project"),
        (["workspace", "create", "x", "--project-slug", "Bad"], None, 2, "--project-slug"),
    ],
)
def test_errors_have_a_clear_message_and_exit_code(run, args, stdin, code, needle):
    assert run("workspace", "create", "acme")[0] == 0

    status, out, err = run(*args, stdin=stdin)

    assert status == code, err
    assert needle in err
    assert "Traceback" not in err and out == ""


def test_json_errors_go_to_stderr_as_message_and_code(run):
    status, out, err = run("key", "list", "--json")

    assert status == 1 and out == ""
    assert json.loads(err) == {
        "message": "the store has no workspace yet: run `mnemo workspace create NAME` (or `mnemo serve`)",
        "code": "not_found",
    }


def test_several_workspaces_need_an_explicit_workspace(run, monkeypatch):
    run("workspace", "create", "one")
    _, out, _ = run("--json", "workspace", "create", "two")
    second = json.loads(out)["workspace"]["id"]

    status, _, err = run("project", "list")
    assert status == 2 and "--workspace" in err

    assert run("project", "list", "-w", second)[0] == 0
    monkeypatch.setenv("MNEMO_WORKSPACE", second)
    status, out, _ = run("project", "list", "--json")
    assert status == 0 and json.loads(out)["workspace_id"] == second


def test_flags_work_before_and_after_the_command(run, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    status, out, _ = run("workspace", "create", "acme", "--json", "--data-dir", str(other))

    assert status == 0 and json.loads(out)["workspace"]["name"] == "acme"
    assert (other / "mnemo.db").exists()


def test_limits_set_one_figure_keeps_the_other_and_default_resets(run):
    run("workspace", "create", "acme")

    _, out, _ = run("limits", "set", "--write", "7", "--json")
    assert (json.loads(out)["search"], json.loads(out)["write"], json.loads(out)["custom"]) == (120, 7, True)
    _, out, _ = run("limits", "set", "--default", "--json")
    assert json.loads(out)["custom"] is False
    _, out, _ = run("limits", "show")
    assert "search 120/min  write 60/min" in out


def test_limits_show_says_where_default_figures_come_from(run, monkeypatch):
    run("workspace", "create", "acme")
    _, built_in, _ = run("limits", "show")
    monkeypatch.setenv("MNEMO_SEARCH_PER_MINUTE", "1000000")
    runtime.use(None)  # settings are read once per process: read them again
    _, from_env, _ = run("limits", "show")
    run("limits", "set", "--write", "7")
    _, own, _ = run("limits", "show")

    assert "search 120/min" in built_in and "built in" in built_in and "a server started with other" in built_in
    assert "search 1000000/min" in from_env and "from MNEMO_SEARCH_PER_MINUTE here" in from_env
    assert "this workspace's own; every server applies them" in own


def test_text_listings_are_tables(run):
    run("workspace", "create", "acme")
    run("project", "create", "docs")

    _, out, _ = run("project", "list")

    header, *rows = out.splitlines()
    assert header.split() == ["ID", "SLUG", "NAME", "DEFAULT"]
    assert [r.split()[1] for r in rows] == ["default", "docs"]


@pytest.mark.parametrize(
    "command",
    [["key", "list"], ["workspace", "create", "acme"], ["export"], ["cleanup"], ["limits", "show"]],
)
def test_a_data_folder_that_does_not_exist_is_refused_and_not_created(run, tmp_path, command):
    missing = tmp_path / "no" / "such" / "dir"

    status, out, err = run("--data-dir", str(missing), *command)

    assert status == 1 and out == ""
    assert f"the data folder {missing} does not exist" in err and "serve` creates a new store there" in err
    assert not (tmp_path / "no").exists()


def test_the_cli_runs_openblas_on_one_thread_unless_told_otherwise(run, monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    run("workspace", "list")
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    run("workspace", "list")
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_importing_the_cli_does_not_import_numpy_before_it_sets_its_threads():
    import subprocess
    import sys

    code = "import sys; import mnemo.local.cli; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["cleanup"]])
def test_the_aws_backend_without_its_extra_says_what_to_install(run, monkeypatch, command):
    # Given a venv as `make run` makes it: the `aws` extra (opensearch-py) is not installed
    import sys

    monkeypatch.setitem(sys.modules, "opensearchpy", None)  # `import opensearchpy` raises ImportError

    # When a command runs on the AWS backend, Then it is one usage line naming the extra, no traceback
    code, out, err = run("--backend", "aws", *command)
    assert code == 2, (out, err)
    assert "`aws` extra" in err and "pip install -e '.[aws]'" in err
    assert "Traceback" not in err


def test_a_misspelt_setting_is_one_warning_line_naming_the_closest_setting(run, monkeypatch):
    monkeypatch.setenv("MNEMO_EMBEDER", "none")

    code, _, err = run("workspace", "list")

    assert code == 0
    warnings = [line for line in err.splitlines() if "MNEMO_EMBEDER" in line]
    assert warnings == [
        "mnemo: warning: MNEMO_EMBEDER is not a Mnemo setting and is ignored; did you mean MNEMO_EMBEDDER?"
    ]


def test_the_flags_reach_the_runtime_as_settings_and_the_environment_is_left_alone(run, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.delenv("MNEMO_DATA_DIR")
    before = {k: v for k, v in os.environ.items() if k.startswith("MNEMO_")}

    code, _, _ = run("--backend", "sqlite", "--data-dir", str(other), "workspace", "create", "flagged")

    assert code == 0
    assert runtime.settings().data_dir == other and (other / "mnemo.db").exists()
    assert {k: v for k, v in os.environ.items() if k.startswith("MNEMO_")} == before
