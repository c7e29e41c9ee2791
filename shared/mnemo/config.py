"""Configuration: one validated model, read from the environment once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MNEMO_", extra="ignore")

    backend: Literal["sqlite", "aws"] = "sqlite"
    #: the embedded backend's folder (SQLite file ``mnemo.db`` inside)
    data_dir: Path = Path(".mnemo")

    #: default per-workspace limits (SPEC §5); a workspace may carry its own
    search_per_minute: int = Field(default=120, ge=1)
    write_per_minute: int = Field(default=60, ge=1)

    #: bodies above this are 413 (SPEC §4)
    max_body_bytes: int = 64 * 1024

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "mnemo.db"
