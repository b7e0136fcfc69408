"""The library API the rest of the project builds on.

``check_specs`` and ``check_source`` run the whole front end (read, parse,
resolve, type-check, rules) and return the diagnostics as data together with
the typed model of every world. They never raise for bad input.

They check the *specs* only: a task is type-checked here, but whether it makes
sense (its solution succeeds and passes its checks) is only known by running
it, which is a service above the compiler (``worldspec.check_paths``, defined in
``worldspec.services.validation``). The two names say which check a caller gets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from worldspec.compiler.checker import check_program
from worldspec.compiler.loader import Program, load_program, load_text
from worldspec.compiler.model import ProgramModel
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink, Severity

__all__ = ["CheckResult", "check_source", "check_specs"]


@dataclass(frozen=True)
class CheckResult:
    """Everything the front end learnt about a set of files."""

    program: Program
    model: ProgramModel
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def _finish(program: Program, sink: DiagnosticSink) -> CheckResult:
    model = check_program(program, sink)
    return CheckResult(program=program, model=model, diagnostics=tuple(sink.sorted()))


def check_specs(paths: Iterable[str | Path]) -> CheckResult:
    """Check files and folders (every ``*.world`` below a folder); tasks are not run."""
    sink = DiagnosticSink()
    return _finish(load_program(paths, sink), sink)


def check_source(text: str, path: str = "<input>.world") -> CheckResult:
    """Check one in-memory file; its imports are read relative to ``path``."""
    sink = DiagnosticSink()
    return _finish(load_text(text, path, sink), sink)
