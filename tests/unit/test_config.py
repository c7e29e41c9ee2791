"""Settings come from ``MNEMO_*`` variables, parsed and validated by the model; constructor values win."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemo.config import Settings
from pydantic import ValidationError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    import os

    for name in list(os.environ):
        if name.upper().startswith("MNEMO_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_fields_are_read_from_prefixed_variables_of_any_case_and_parsed(clean_environment):
    clean_environment.setenv("MNEMO_BACKEND", "aws")
    clean_environment.setenv("mnemo_opensearch_sigv4", "true")
    clean_environment.setenv("MNEMO_TENANT_CACHE_S", "0")
    clean_environment.setenv("MNEMO_DATA_DIR", "/srv/mnemo")

    cfg = Settings()

    assert (cfg.backend, cfg.opensearch_sigv4, cfg.tenant_cache_s, cfg.data_dir) == (
        "aws",
        True,
        0.0,
        Path("/srv/mnemo"),
    )


def test_constructor_values_win_over_the_environment_and_unknown_variables_are_ignored(clean_environment):
    clean_environment.setenv("MNEMO_BACKEND", "aws")
    clean_environment.setenv("MNEMO_NOT_A_SETTING", "x")

    cfg = Settings(backend="sqlite")

    assert cfg.backend == "sqlite"
    assert not hasattr(cfg, "not_a_setting")


def test_without_variables_the_defaults_hold(clean_environment):
    assert Settings() == Settings.model_validate({})


@pytest.mark.parametrize(("name", "value"), [("MNEMO_BACKEND", "postgres"), ("MNEMO_TENANT_CACHE_S", "-1")])
def test_a_bad_value_in_the_environment_is_refused(clean_environment, name, value):
    clean_environment.setenv(name, value)

    with pytest.raises(ValidationError):
        Settings()
