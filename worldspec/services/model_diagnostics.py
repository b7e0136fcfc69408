"""Compiler diagnostics as a model reads them in a repair request.

Every front end that repairs model-written ``.world`` text (``synth``'s worlds and tasks,
``port``'s methods) sends the compiler's findings back the same way: compact JSON objects
with the source line each points at, errors first, at most :data:`MAX_FEEDBACK` of them.
"""

from __future__ import annotations

from typing import Any

from worldspec.dsl.diagnostics import Diagnostic

__all__ = ["MAX_FEEDBACK", "diagnostics_for_model"]

#: At most this many diagnostics or findings are sent back in one repair request.
MAX_FEEDBACK = 20


def diagnostics_for_model(diagnostics: list[Diagnostic], text: str, *, file: str | None = None,
                          line_offset: int = 0) -> list[dict[str, Any]]:
    """Diagnostics as compact JSON objects with the source line each points at.

    Only diagnostics in ``file`` are kept when it is given; line numbers are
    shifted by ``-line_offset`` so they match the text the model wrote.
    """
    lines = text.split("\n")
    out: list[dict[str, Any]] = []
    for d in diagnostics:
        if file is not None and d.span.file != file:
            continue
        line = d.span.line - line_offset
        item: dict[str, Any] = {"code": d.code, "severity": d.severity.value,
                                "message": d.message, "line": line, "column": d.span.column}
        if 1 <= line <= len(lines):
            item["source"] = lines[line - 1].strip()[:200]
        if d.hints:
            item["hints"] = list(d.hints)
        out.append(item)
    errors = [x for x in out if x["severity"] == "error"]
    return (errors + [x for x in out if x["severity"] != "error"])[:MAX_FEEDBACK]
