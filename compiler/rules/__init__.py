"""Semantic rules: one rule per module, run in order from one registry.

A rule is a class with a one-sentence docstring, the codes it may report,
and ``check(ctx)``. Rules read the typed world model and report into the
sink; they never raise and never change the model. Adding a rule is adding
a module here and a line in :data:`RULES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from worldspec.compiler.model import ProgramModel, WorldModel
from worldspec.dsl.diagnostics import DiagnosticSink

__all__ = ["Rule", "RuleContext", "RULES", "run_rules"]


@dataclass
class RuleContext:
    """What a rule sees: one world, the program's side tables, the sink."""

    world: WorldModel
    program: ProgramModel
    sink: DiagnosticSink


class Rule(Protocol):
    """A semantic rule."""

    codes: ClassVar[tuple[str, ...]]

    def check(self, ctx: RuleContext) -> None: ...


def _registry() -> list[Rule]:
    from worldspec.compiler.rules.clock_range import ClockRange
    from worldspec.compiler.rules.entity_keys import EntityKeys
    from worldspec.compiler.rules.entity_tables import EntityTables
    from worldspec.compiler.rules.invariant_clock import InvariantClock
    from worldspec.compiler.rules.missing_return import MissingReturn
    from worldspec.compiler.rules.patterns import Patterns
    from worldspec.compiler.rules.reward_modes import RewardModes
    from worldspec.compiler.rules.tool_doc_fields import ToolDocFields
    from worldspec.compiler.rules.tool_docs import ToolDocs
    from worldspec.compiler.rules.unreachable_code import UnreachableCode
    from worldspec.compiler.rules.whole_row_places import WholeRowPlaces

    return [EntityKeys(), EntityTables(), UnreachableCode(), MissingReturn(), InvariantClock(),
            ClockRange(), ToolDocs(), ToolDocFields(), Patterns(),
            WholeRowPlaces(), RewardModes()]


RULES: list[Rule] = []


def run_rules(ctx: RuleContext) -> None:
    """Run every registered rule over one world, in registry order."""
    if not RULES:
        RULES.extend(_registry())
    for rule in RULES:
        rule.check(ctx)
