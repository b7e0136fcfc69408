"""``docs/diagnostics.md`` is generated from the catalog; these tests keep the two equal.

When one fails after a code was added or changed, regenerate the document:
``python scripts/gen_diagnostics_doc.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.render import render_explanation

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_diagnostics_doc.py"
DOC = ROOT / "docs" / "diagnostics.md"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_diagnostics_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_document_matches_the_catalog() -> None:
    generated = load_generator().generate()
    committed = DOC.read_text(encoding="utf-8")
    assert committed == generated, (
        "docs/diagnostics.md is out of date: run `python scripts/gen_diagnostics_doc.py`"
    )


def test_every_code_is_in_the_document_with_the_explain_text() -> None:
    text = load_generator().generate()
    for entry in CATALOG.values():
        assert render_explanation(entry, heading_level=3) in text


def test_codes_are_grouped_by_their_range() -> None:
    text = load_generator().generate()
    for digit, heading in load_generator().GROUPS.items():
        codes = [c for c in CATALOG if c[2] == digit]
        if not codes:
            continue
        group_at = text.index(f"\n## {heading}\n")
        for code in codes:
            assert text.index(f"\n### {code}: ") > group_at


def test_check_mode_reports_a_stale_document(tmp_path: Path) -> None:
    generator = load_generator()
    stale = tmp_path / "diagnostics.md"
    stale.write_text("old\n", encoding="utf-8")
    assert generator.main(["--check", "--output", str(stale)]) == 1
    assert generator.main(["--output", str(stale)]) == 0
    assert generator.main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == generator.generate()
