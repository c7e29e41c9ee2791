"""One way to replace methods of a moto class for the tests' moto servers (``moto_queries``,
``moto_responses``, ``moto_transactions``): installed once per process, undone for the unit tests
that compare an answer with moto's own."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


class MotoPatch:
    """Methods of the class ``module:name`` replaced (every moto server of this process); moto is
    imported when the patch is installed, not before."""

    def __init__(self, owner: str, **replacements: Callable[..., Any]) -> None:
        self._owner = owner
        self._replacements = replacements
        self._originals: dict[str, Any] = {}

    def _cls(self) -> Any:
        module, _, name = self._owner.partition(":")
        return getattr(importlib.import_module(module), name)

    def install(self) -> None:
        """Replace the methods (idempotent)."""
        if self._originals:
            return
        cls = self._cls()
        self._originals = {name: getattr(cls, name) for name in self._replacements}
        for name, replacement in self._replacements.items():
            setattr(cls, name, replacement)

    def uninstall(self) -> None:
        """moto's own methods again."""
        cls = self._cls()
        for name, original in self._originals.items():
            setattr(cls, name, original)
        self._originals = {}

    def original(self, name: str) -> Any:
        """moto's own method ``name``, installed or not."""
        return self._originals.get(name) or getattr(self._cls(), name)
