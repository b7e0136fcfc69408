"""The rollout record's schema (:class:`~worldspec.rollout.records.RolloutRecord`) and the
table of ``docs/rollouts.md`` that documents it name the same fields (``tests/test_rollout.py``
checks that a record the runner writes holds exactly those fields)."""

from __future__ import annotations

import re
from pathlib import Path

from worldspec.rollout.records import FORMAT, RolloutRecord

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rollouts.md"

_SECTION = re.compile(r"^## The record \(format `(?P<format>[^`]+)`\)\n(?P<body>.*?)(?=^## |\Z)",
                      re.M | re.S)
_ROW = re.compile(r"^\|(?P<field>[^|]*)\|", re.M)


def documented_fields(markdown: str) -> tuple[str, set[str]]:
    """The format a document's record section names, and the fields its table's first column
    names (each in backticks, several to a row: ``| `world`, `world_sha256` | ... |``)."""
    section = _SECTION.search(markdown)
    assert section is not None, "no '## The record (format ...)' section"
    fields: set[str] = set()
    for row in _ROW.finditer(section["body"]):
        cell = row["field"].strip()
        if cell in ("field", "") or set(cell) <= {"-"}:
            continue
        fields.update(re.findall(r"`([^`]+)`", cell))
    return section["format"], fields


def schema_fields() -> set[str]:
    return set(RolloutRecord.__required_keys__ | RolloutRecord.__optional_keys__)


def test_every_field_of_the_schema_is_documented_and_every_documented_field_is_in_it() -> None:
    documented_format, documented = documented_fields(DOC.read_text(encoding="utf-8"))
    assert documented_format == FORMAT
    assert sorted(schema_fields() - documented) == []  # in the schema, not in the table
    assert sorted(documented - schema_fields()) == []  # in the table, not in the schema


def test_the_reader_of_the_table_sees_a_field_missing_or_extra() -> None:
    """The comparison says no on a table that leaves a field out or names one too many."""
    text = DOC.read_text(encoding="utf-8")
    without = text.replace("| `replies` |", "| |")
    assert without != text
    assert schema_fields() - documented_fields(without)[1] == {"replies"}
    extra = text.replace("| `passed` |", "| `passed`, `verdict` |")
    assert extra != text
    assert documented_fields(extra)[1] - schema_fields() == {"verdict"}


def test_the_schema_says_which_fields_every_record_has() -> None:
    """A reader checks ``format`` and ``key``; every other field may be absent (a record of
    a rollout that raised stops at ``usage``)."""
    assert RolloutRecord.__required_keys__ == frozenset({"format", "key"})
    assert len(schema_fields()) == 30
