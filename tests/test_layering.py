"""Stages import one way: dsl <- compiler <- worldspec. Importing a stage alone proves it."""

from __future__ import annotations

import subprocess
import sys

import pytest

# package -> packages it must never load
FORBIDDEN = {
    "dsl": ("compiler", "worldspec", "llm_frontend"),
    "dsl.parser": ("compiler", "worldspec", "llm_frontend"),
    "compiler.api": ("worldspec", "llm_frontend"),
}


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_stage_imports_only_earlier_stages(module: str) -> None:
    banned = FORBIDDEN[module]
    code = (
        f"import sys, {module}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {banned!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
