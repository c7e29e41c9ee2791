"""docs/api.md's tool reference is generated from the registry and the models (``make docs``):
the committed file must be exactly what the generator makes of the code, so it cannot drift."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from mnemo import errors
from mnemo.api.openapi import build_openapi
from mnemo.models.tools import ErrorBody
from mnemo.service.catalog import ADMIN_OPERATIONS, TOOLS

from scripts import api_reference as reference

DOCS = Path(__file__).resolve().parents[2] / "docs"
API_MD = DOCS / "api.md"


def test_the_committed_reference_is_what_the_generator_makes_of_the_code():
    committed = API_MD.read_text(encoding="utf-8")

    regenerated = reference.update(committed)

    assert regenerated == committed, "docs/api.md is out of date with the models: run `make docs`"


def test_every_tool_and_admin_operation_has_a_section():
    text = reference.render()

    missing = [name for name in [*TOOLS, *ADMIN_OPERATIONS] if f"\n### {name}\n" not in text]

    assert missing == []


def test_a_changed_limit_in_the_models_changes_the_reference():
    doc = build_openapi()
    changed = copy.deepcopy(doc)
    changed["components"]["schemas"]["MemorySearchArgs"]["properties"]["limit"]["maximum"] = 99

    before, after = reference.render(doc), reference.render(changed)

    assert "| `limit` | integer | `50` | 1–100 |" in before
    assert "| `limit` | integer | `50` | 1–99 |" in after


def test_check_mode_fails_on_a_stale_file_and_passes_on_a_fresh_one(tmp_path, capsys):
    stale = tmp_path / "api.md"
    stale.write_text(f"# API\n\n{reference.BEGIN}\nold text\n{reference.END}\n", encoding="utf-8")

    assert reference.main(["--check", str(stale)]) == 1
    assert "make docs" in capsys.readouterr().err
    assert reference.main([str(stale)]) == 0
    assert reference.main(["--check", str(stale)]) == 0
    assert "old text" not in stale.read_text(encoding="utf-8")


def test_a_file_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        reference.update("# API\n")


def test_the_contracts_error_table_is_the_one_the_code_answers_with():
    """docs/contract.md §4 lists exactly the codes an error body may carry, each with the status
    the domain error of that code answers with."""
    contract = (DOCS / "contract.md").read_text(encoding="utf-8")
    section = contract.split("\n## 4. Errors\n", 1)[1].split("\n## ", 1)[0]
    table = {code: int(status) for status, code in re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", section, re.MULTILINE)}
    classes = [cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.MnemoError)]
    answered = {cls.code: cls.status for cls in classes}

    assert table == answered
    assert set(table) == set(ErrorBody.model_fields["code"].annotation.__args__)
