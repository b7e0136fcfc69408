"""One diagnostic type, one catalog of codes, and the sink every stage reports into.

Finding problems and showing them are separate: stages create
:class:`Diagnostic` values through :class:`DiagnosticSink`; renderers in
:mod:`dsl.render` turn them into terminal text or JSON.

Codes are stable. ``WS1xx`` are syntax and input problems, ``WS2xx`` names
and scopes, ``WS3xx`` types, ``WS4xx`` statements and control flow, ``WS5xx``
world structure (state, invariants, tools), ``WS6xx`` tasks and data. The
catalog itself lives in :mod:`dsl.catalog` so that documentation can be
generated from it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.nodes import Span

__all__ = ["Severity", "Related", "Diagnostic", "DiagnosticSink", "did_you_mean", "MAX_ERRORS"]

MAX_ERRORS = 100


class Severity(StrEnum):
    """How bad a diagnostic is; only errors make ``check`` fail."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Related:
    """A secondary location, e.g. "first defined here"."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in a spec, with a stable code and a primary span."""

    code: str
    severity: Severity
    message: str
    span: Span
    hints: tuple[str, ...] = ()
    related: tuple[Related, ...] = ()

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.file, self.span.line, self.span.column, self.code)

    def to_json(self) -> dict[str, object]:
        """The JSON shape used by ``worldspec check --format json`` and the repair loop."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "hints": list(self.hints),
            "related": [
                {"message": r.message, "file": r.span.file, "line": r.span.line,
                 "column": r.span.column}
                for r in self.related
            ],
        }


@dataclass
class DiagnosticSink:
    """Collects diagnostics; stages report, never raise.

    The severity comes from the catalog, so a code always has one severity.
    Identical reports (same code and span) are dropped, and after
    :data:`MAX_ERRORS` errors further reports are ignored.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    _seen: set[tuple[str, str, int, int]] = field(default_factory=set)
    _errors: int = 0

    def report(
        self,
        code: str,
        span: Span,
        message: str,
        *,
        hints: Iterable[str] = (),
        related: Iterable[Related] = (),
    ) -> None:
        entry = CATALOG[code]
        key = (code, span.file, span.start, span.end)
        if key in self._seen or self.error_count() >= MAX_ERRORS:
            return
        self._seen.add(key)
        severity = Severity(entry.severity)
        if severity is Severity.ERROR:
            self._errors += 1
        self.diagnostics.append(
            Diagnostic(code, severity, message, span, tuple(hints), tuple(related))
        )

    def error_count(self) -> int:
        return self._errors

    def has_errors(self) -> bool:
        return self.error_count() > 0

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.diagnostics, key=Diagnostic.sort_key)


def did_you_mean(name: str, candidates: Iterable[str]) -> list[str]:
    """Hints naming the candidates closest to ``name`` (at most two)."""
    pool: Sequence[str] = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=2, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    if not close:
        return []
    quoted = " or ".join(f"'{c}'" for c in close)
    return [f"did you mean {quoted}?"]
