"""Initial data (a task's ``given``) checked against the world's schema."""

from __future__ import annotations

from compiler.model import WorldModel
from dsl import nodes as n
from dsl.diagnostics import DiagnosticSink

__all__ = ["check_given"]


def check_given(given: n.Given, path: str, world: WorldModel, sink: DiagnosticSink) -> None:
    """Report every value of ``given`` that does not fit the schema, by JSON path."""
