"""A hypothesis state machine for any compiled world: one rule per tool.

Generated packages hold a ``test_world.py`` that builds its test case here,
so ``pytest generated/`` runs every world's property tests. Argument
strategies come from the tools' JSON schemas through one table
(:data:`STRATEGIES`); entity parameters draw mostly keys that exist. After
every rule the properties of :mod:`worldspec.testing.properties` are
checked, and the machine can start from each task's data or from empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from worldspec.runtime.episode import Episode, ParamSpec, ToolSpec
from worldspec.runtime.shapes import pattern_matcher
from worldspec.testing.properties import check_call

__all__ = ["from_schema", "world_state_machine", "STRATEGIES"]

Schema = dict[str, Any]


def _integer(schema: Schema) -> st.SearchStrategy[Any]:
    return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))


def _number(schema: Schema) -> st.SearchStrategy[Any]:
    return st.floats(min_value=schema.get("minimum"), max_value=schema.get("maximum"),
                     allow_nan=False, allow_infinity=False)


def _string(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.get("format") == "date":
        return st.dates().map(lambda d: d.isoformat())
    if schema.get("format") == "date-time":
        return st.datetimes().map(lambda d: d.isoformat())
    if "pattern" in schema:
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        matches = pattern_matcher(schema["pattern"])
        return _regex_strings(schema["pattern"]).filter(
            lambda s: len(s) >= lo and (hi is None or len(s) <= hi) and matches(s))
    return st.text(min_size=schema.get("minLength", 0),
                   max_size=schema.get("maxLength", 20))


def _regex_strings(pattern: str) -> st.SearchStrategy[str]:
    """Strings hypothesis builds from ``pattern`` in Python's dialect, made ASCII where RE2 is
    (``\\d``, ``\\w``, ``\\s``); the caller keeps those the runtime's RE2 matcher accepts
    (RE2's ``\\s`` lacks ``\\v``), so a generated argument is one the runtime takes."""
    try:
        compiled = re.compile(pattern, re.ASCII)
    except re.error:  # e.g. a pattern that sets (?u) itself
        compiled = re.compile(pattern)
    return st.from_regex(compiled, fullmatch=True)


def _array(schema: Schema) -> st.SearchStrategy[Any]:
    return st.lists(from_schema(schema.get("items", {})), min_size=schema.get("minItems", 0),
                    max_size=schema.get("maxItems", 4), unique=bool(schema.get("uniqueItems")))


def _object(schema: Schema) -> st.SearchStrategy[Any]:
    props = schema.get("properties")
    if props is not None:
        return st.fixed_dictionaries({k: from_schema(v) for k, v in props.items()})
    extra = schema.get("additionalProperties")
    values = from_schema(extra) if isinstance(extra, dict) else st.none()
    return st.dictionaries(st.text(max_size=8), values,
                           min_size=schema.get("minProperties", 0),
                           max_size=schema.get("maxProperties", 3))


#: JSON schema ``type`` -> hypothesis strategy builder.
STRATEGIES: dict[str, Callable[[Schema], st.SearchStrategy[Any]]] = {
    "integer": _integer,
    "number": _number,
    "string": _string,
    "boolean": lambda schema: st.booleans(),
    "null": lambda schema: st.none(),
    "array": _array,
    "object": _object,
}


def from_schema(schema: Schema) -> st.SearchStrategy[Any]:
    """The strategy of the values a (generated, strict-mode) JSON schema accepts."""
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([STRATEGIES[k]({"type": k}) for k in kind if k in STRATEGIES])
    builder = STRATEGIES.get(kind or "")
    return builder(schema) if builder is not None else st.none()


def world_state_machine(world: type[Episode]) -> type[RuleBasedStateMachine]:
    """A state machine exercising every tool of ``world`` with the shared properties."""
    starts = [task.data for task in world.TASKS.values()] + [{}]

    class WorldMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.episode = world()

        @initialize(start=st.sampled_from(range(len(starts))))
        def start(self, start: int) -> None:
            self.episode = world(data=starts[start])

        @invariant()
        def rules_hold(self) -> None:
            problem = self.episode.invariant_problem()
            assert problem is None, problem.message if problem else ""

    def make_rule(spec: ToolSpec) -> Callable[..., None]:
        def run(self: Any, data: st.DataObject) -> None:
            args: dict[str, Any] = {}
            for param in spec.params:
                args[param.name] = data.draw(_argument(param, self.episode), label=param.name)
            before = self.episode.state_hash()
            self.episode.call(spec.name, args)
            broken = check_call(self.episode, spec, args, before)
            assert broken is None, f"{broken.kind}: {broken.message} ({broken.where})" \
                if broken else ""

        run.__name__ = f"call_{spec.name}"
        return rule(data=st.data())(run)

    for spec in world.TOOLS.values():
        setattr(WorldMachine, f"call_{spec.name}", make_rule(spec))
    WorldMachine.__name__ = f"{world.__name__}Machine"
    # Examples come from the active profile (bounded in CI); sequences stay short so that
    # shrinking is fast, and slow specs do not trip hypothesis' health checks.
    WorldMachine.TestCase.settings = settings(
        stateful_step_count=20, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                               HealthCheck.data_too_large])
    return WorldMachine


def _argument(param: ParamSpec, episode: Episode) -> st.SearchStrategy[Any]:
    values = from_schema(param.schema)
    if param.table:
        keys = episode.tables[param.table].keys()
        if keys:  # mostly keys that exist, some that may not
            return st.one_of(st.sampled_from(keys), values)
    return values
