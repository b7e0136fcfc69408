"""A world compiled from spec text in a test's own folder (and its compile cache there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from worldspec.runtime.episode import Episode
from worldspec.services.loading import compile_worlds


def compile_text(root: Path, filename: str, text: str, world: str) -> type[Episode]:
    """World ``world`` of spec ``text``, written to ``root / filename`` and compiled with the
    compile cache in ``root / "cache"`` (no test shares another's cache)."""
    spec = root / filename
    spec.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return compile_worlds([spec]).worlds[world]


def generated_source(world: type[Episode]) -> str:
    """The generated Python source of a compiled world's module."""
    return Path(sys.modules[world.__module__].__file__ or "").read_text(encoding="utf-8")
