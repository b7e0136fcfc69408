"""The rule table: every kind of change ``worldspec diff`` reports, with its level and area.

One row per rule. The comparison (:mod:`worldspec.services.diff.compare`) decides
*which* rule a difference falls under; the row decides how bad it is, so a
level is changed here and nowhere else. ``docs/diff.md`` lists the same
table, and a test keeps the two in step.

Levels: **breaking** — something that worked on the old spec can fail on the
new one (a call, a task, initial data, a recorded trajectory that scored 1);
**dangerous** — it still works but means something else, or the agent reads
different text; **safe** — additions nothing built on the old spec notices;
**info** — nothing an agent or a task can observe.
"""

from __future__ import annotations

from dataclasses import dataclass

from worldspec.services.diff.model import Area, Level

__all__ = ["Rule", "RULES", "rule"]

B, D, S, INFO = Level.BREAKING, Level.DANGEROUS, Level.SAFE, Level.INFO
IFACE, BEHAV, STATE, TASKS = Area.INTERFACE, Area.BEHAVIOUR, Area.STATE, Area.TASKS


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of change."""

    id: str
    level: Level
    area: Area
    description: str


_TABLE: tuple[Rule, ...] = (
    # ---------------------------------------------------------------- worlds and config
    Rule("world-removed", B, IFACE, "A world was removed, with every tool and task in it."),
    Rule("world-added", S, IFACE, "A new world."),
    Rule("world-description-changed", D, IFACE,
         "The world's description changed; it is part of the agent's system prompt."),
    Rule("result-convention-changed", B, BEHAV,
         "`config results` changed: every success and failure looks different to the agent."),
    Rule("clock-changed", D, BEHAV,
         "`config clock` or `tick` changed: `now`, and everything stamped with it, differs."),
    Rule("seed-changed", D, BEHAV, "`config seed` changed: the random draws differ."),
    Rule("const-changed", D, BEHAV,
         "A `const` was added, removed or given another value: what reads it may differ."),
    Rule("failure-texts-changed", D, BEHAV,
         "The custom result shapes, `config arguments`, `class_name` or `unknown_tool` "
         "changed: results and argument errors read differently to the agent."),
    Rule("policy-changed", D, IFACE,
         "The world's `policy` was added, removed or reworded; the agent's system prompt shows "
         "it."),
    # ---------------------------------------------------------------- tools
    Rule("tool-removed", B, IFACE, "A tool was removed; calls to it fail."),
    Rule("tool-added", S, IFACE, "A new tool."),
    Rule("tool-description-changed", D, IFACE,
         "A tool's description changed; the LLM reads it to decide what to call."),
    Rule("result-type-changed", B, IFACE,
         "A tool now returns a value of another type."),
    Rule("result-type-widened", D, IFACE,
         "A tool may now return values it never returned (e.g. none, a wider range)."),
    Rule("result-type-narrowed", S, IFACE,
         "A tool returns a subset of what it returned (e.g. no longer none)."),
    Rule("param-removed", B, IFACE, "A parameter was removed; calls passing it fail."),
    Rule("param-added-required", B, IFACE,
         "A new required parameter; calls without it fail."),
    Rule("param-added-optional", S, IFACE, "A new parameter with a default, or optional."),
    Rule("param-now-required", B, IFACE,
         "A parameter lost its default; calls that left it out fail."),
    Rule("param-now-optional", S, IFACE, "A parameter got a default, or became optional."),
    Rule("param-type-narrowed", B, IFACE,
         "A parameter accepts fewer values: a tighter range or length, a new pattern, "
         "float to int, optional to required."),
    Rule("param-type-changed", B, IFACE,
         "A parameter's type changed to an unrelated one, or its pattern changed (which "
         "values still match cannot be decided)."),
    Rule("param-type-widened", S, IFACE,
         "A parameter accepts more values: a looser range, no pattern, int to float."),
    Rule("param-default-changed", D, BEHAV,
         "A parameter's default changed; calls that leave it out do something else."),
    Rule("param-description-changed", D, IFACE,
         "A parameter's description changed; the LLM reads it."),
    Rule("param-order-changed", INFO, IFACE,
         "Parameters were reordered (arguments are named; only the schema's order moves)."),
    # ---------------------------------------------------------------- behaviour
    Rule("precondition-added", B, BEHAV,
         "A new `require`: calls that succeeded may now fail."),
    Rule("precondition-removed", D, BEHAV,
         "A `require` was removed: calls that failed may now succeed."),
    Rule("precondition-tightened", B, BEHAV,
         "A `require` condition provably accepts less (a conjunct added, a bound raised)."),
    Rule("precondition-loosened", D, BEHAV,
         "A `require` condition provably accepts more (a conjunct dropped, a bound lowered)."),
    Rule("precondition-changed", B, BEHAV,
         "A `require` condition changed in a way that is neither provably tighter nor "
         "looser; classified as breaking because it may reject calls that used to work."),
    Rule("precondition-reordered", D, BEHAV,
         "`require`s were reordered: a call breaking several gets another message first."),
    Rule("error-message-changed", D, BEHAV,
         "A failure message changed (`require`, `fail`, a parameter's `else`, an "
         "invariant's message); the LLM reads it and trajectories recorded it."),
    Rule("tool-effects-changed", D, BEHAV,
         "A tool's body changed beyond its preconditions and messages: what it changes or "
         "returns may differ."),
    Rule("helper-changed", D, BEHAV,
         "A helper `fn` changed; every tool, invariant and check using it may behave "
         "differently."),
    Rule("helper-added", INFO, BEHAV, "A new helper `fn`."),
    Rule("helper-removed", INFO, BEHAV, "A helper `fn` was removed (nothing used it, or the "
         "users changed too)."),
    Rule("invariant-added", B, BEHAV,
         "A new invariant: calls and initial data that were accepted may be rejected."),
    Rule("invariant-removed", D, BEHAV, "An invariant was removed: calls it rejected succeed."),
    Rule("invariant-tightened", B, BEHAV, "An invariant provably accepts fewer states."),
    Rule("invariant-loosened", D, BEHAV, "An invariant provably accepts more states."),
    Rule("invariant-changed", B, BEHAV,
         "An invariant's condition changed undecidably; breaking, as for preconditions."),
    # ---------------------------------------------------------------- state schema
    Rule("type-removed", B, STATE, "An enum, record, entity or union was removed."),
    Rule("type-added", S, STATE, "A new enum, record, entity or union."),
    Rule("type-kind-changed", B, STATE,
         "A declaration changed kind (record to entity, enum to record, ...)."),
    Rule("key-changed", B, STATE,
         "An entity's key field changed: rows and references are found by another value."),
    Rule("field-removed", B, STATE,
         "A field was removed: data giving it no longer loads, results lack it."),
    Rule("field-added-required", B, STATE,
         "A new field without a default: existing data and records lack it."),
    Rule("field-added-optional", S, STATE, "A new field with a default, or optional."),
    Rule("field-now-required", B, STATE,
         "A field lost its default: data that left it out no longer loads."),
    Rule("field-now-optional", S, STATE, "A field got a default."),
    Rule("field-type-narrowed", B, STATE,
         "A field accepts fewer values: existing data may no longer load."),
    Rule("field-type-changed", B, STATE,
         "A field's type changed to an unrelated one, or its pattern changed."),
    Rule("field-type-widened", D, STATE,
         "A field accepts more values: data still loads, but results and checks may see "
         "values they never saw."),
    Rule("field-default-changed", D, STATE,
         "A field's default changed: rows built without it get another value."),
    Rule("enum-member-added", D, STATE,
         "A new enum member: consumers that handle every member may not handle it."),
    Rule("enum-member-removed", B, STATE,
         "An enum member was removed: data and arguments using it are rejected."),
    Rule("enum-member-value-changed", B, STATE,
         "An enum member serialises as another string: data and arguments using the old "
         "string are rejected."),
    Rule("union-variant-added", D, STATE, "A new variant of a tagged union."),
    Rule("union-variant-removed", B, STATE, "A variant of a tagged union was removed."),
    Rule("union-variant-changed", B, STATE, "A union tag now stands for another record."),
    Rule("union-tag-changed", B, STATE, "A union's tag field was renamed."),
    Rule("state-removed", B, STATE,
         "A state item was removed: data giving it no longer loads."),
    Rule("state-added", S, STATE, "A new state item (data may leave it out)."),
    Rule("state-type-narrowed", B, STATE, "A state item accepts fewer values."),
    Rule("state-type-changed", B, STATE,
         "A state item changed type or kind (table of another entity, a value to a table, "
         "...)."),
    Rule("state-type-widened", D, STATE, "A state item accepts more values."),
    Rule("state-default-changed", D, STATE,
         "A state item's default changed: tasks that do not give it start differently."),
    Rule("sequence-format-changed", D, STATE,
         "An id sequence's format changed: new ids look different."),
    Rule("doc-changed", INFO, STATE,
         "A description the agent never sees changed (type, field, enum member, state, "
         "check, task)."),
    # ---------------------------------------------------------------- tasks
    Rule("task-removed", B, TASKS,
         "A task was removed: datasets and trajectories naming it cannot be scored."),
    Rule("task-added", S, TASKS, "A new task."),
    Rule("task-invalid", B, TASKS,
         "A task is still declared but has errors that leave it out of its world (e.g. "
         "it names a world that does not exist): it cannot be run or scored."),
    Rule("task-instruction-changed", D, TASKS, "What the agent is asked to do changed."),
    Rule("task-user-changed", D, TASKS,
         "The simulated user changed (`persona`, `known`, `unknown`)."),
    Rule("task-data-changed", D, TASKS, "A task's initial data changed."),
    Rule("task-settings-changed", D, TASKS,
         "A task's `split` or `seed` changed (a train/test move changes the dataset)."),
    Rule("task-tags-changed", INFO, TASKS, "A task's tags changed."),
    Rule("check-added", B, TASKS,
         "A new check: a trajectory that scored 1 may not any more."),
    Rule("check-removed", D, TASKS, "A check was removed: rewards are computed on fewer checks."),
    Rule("check-tightened", B, TASKS, "A check's condition provably holds less often."),
    Rule("check-loosened", D, TASKS, "A check's condition provably holds more often."),
    Rule("check-changed", B, TASKS,
         "A check's condition changed undecidably; breaking, as for preconditions."),
    Rule("check-weight-changed", D, TASKS, "A check's weight changed: rewards shift."),
    Rule("frame-tightened", B, TASKS,
         "The frame allows fewer changes (a target removed, or a frame added)."),
    Rule("frame-loosened", D, TASKS,
         "The frame allows more changes (a target added, or the frame removed)."),
    Rule("frame-changed", B, TASKS, "The frame both allows and forbids new changes."),
    Rule("solution-changed", D, TASKS,
         "The reference solution changed: the exported dataset's demonstrations differ."),
)

#: Every rule by id, in the order of the table.
RULES: dict[str, Rule] = {r.id: r for r in _TABLE}


def rule(rule_id: str) -> Rule:
    """The row of ``rule_id`` (a KeyError for an unknown id is a bug in the comparison)."""
    return RULES[rule_id]
