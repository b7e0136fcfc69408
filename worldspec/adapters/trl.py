"""A world as a TRL environment: ``GRPOTrainer(environment_factory=...)``.

TRL trains an agent on a stateful tool environment given as a class: one instance per rollout,
its public methods the tools (their schemas read from type hints and Google-style docstrings),
``reset(**row)`` called with the dataset row before each rollout, and reward functions that get
the rollouts' environments (``environments=``). :func:`environment_factory` builds that class
from a world:

- one method per tool, named as the tool, whose docstring is the tool's description with an
  ``Args:`` entry per parameter and whose signature carries the types of the tool's JSON schema
  (``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``; nullable ones ``T | None``; enums
  as ``(choices: [...])``); calling it runs ``episode.call`` and answers the world's result text
  (a failed call answers the world's failure message, which a model can read and correct);
- ``reset(task=..., seed=..., **row)`` starts the row's task (the dataset's ``task`` column).

:func:`reward_functions` are the rewards: ``task_reward`` (the task's reward, its checks and
frame) and one ``check_NAME`` per check of the world's tasks (1.0 passed, 0.0 failed, ``None``
for a rollout whose task has no such check, which TRL leaves out of that reward's mean). The
agent's last message is passed as its reply to answer checks. :func:`task_dataset` is the
world's tasks as TRL's conversational prompts: the agent's system prompt (built as everywhere
else, by :func:`worldspec.services.prompts.agent_system_prompt`) and the task's instruction.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from worldspec.runtime.episode import Episode
from worldspec.runtime.schema import tool_definitions
from worldspec.services.prompts import agent_system_prompt

__all__ = ["environment_factory", "reward_functions", "task_dataset", "WorldEnvironment"]

#: JSON schema types as the Python types TRL (transformers' get_json_schema) reads back
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float,
                                  "boolean": bool, "array": list, "object": dict}


class WorldEnvironment:
    """One rollout's episode; :func:`environment_factory` subclasses it with the tools."""

    WORLD: type[Episode]

    def __init__(self) -> None:
        self._episode: Episode = self.WORLD()
        self._task: str | None = None

    def reset(self, task: str | None = None, seed: int | None = None,
              **row: Any) -> str | None:
        """Start the row's task over (``task``, ``seed``: the dataset's columns)."""
        self._task = task
        self._episode = self.WORLD(task=task, seed=seed)
        return None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        result = self._episode.call(name, arguments)
        return result if isinstance(result, str) else _json_text(result)

    def _score(self, replies: Sequence[str] = ()) -> dict[str, Any]:
        """The task's score (reward, checks, frame) for the episode as it is now."""
        if self._episode.task is None:
            return {"reward": 0.0, "checks": []}
        score: dict[str, Any] = self._episode.score(replies=list(replies)).to_json()
        return score


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _hint(schema: Mapping[str, Any]) -> Any:
    kinds = schema.get("type", "string")
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    nullable = "null" in names
    concrete = [_PYTHON_TYPES.get(n, str) for n in names if n != "null"] or [str]
    hint: Any = concrete[0]
    for other in concrete[1:]:
        hint = hint | other
    return hint | None if nullable else hint


def _docstring(description: str, parameters: Mapping[str, Any]) -> str:
    lines = [description.strip() or "A tool of the world.", "", "Args:"]
    for name, schema in parameters.get("properties", {}).items():
        text = " ".join(str(schema.get("description", name)).split())
        if "enum" in schema:
            import json

            text += f" (choices: {json.dumps([c for c in schema['enum'] if c is not None])})"
        lines.append(f"    {name}: {text}")
    if len(lines) == 3:
        lines = lines[:1]
    return "\n".join(lines)


def _tool_method(name: str, description: str, parameters: Mapping[str, Any]) -> Callable[..., str]:
    properties: Mapping[str, Any] = parameters.get("properties", {})
    required = set(parameters.get("required", []))

    def tool(self: WorldEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for parameter, schema in properties.items():
        annotations[parameter] = _hint(schema)
        signature.append(inspect.Parameter(
            parameter, inspect.Parameter.KEYWORD_ONLY, annotation=annotations[parameter],
            default=inspect.Parameter.empty if parameter in required else None))
    annotations["return"] = str
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = _docstring(description, parameters)
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        signature, return_annotation=str)
    return tool


def environment_factory(world: type[Episode]) -> type[WorldEnvironment]:
    """A class TRL instantiates once per rollout: ``GRPOTrainer(environment_factory=it)``."""
    namespace: dict[str, Any] = {"WORLD": world, "__doc__": f"The world {world.WORLD}."}
    for definition in tool_definitions(world.TOOLS.values(), "chat"):
        function = definition["function"]
        name = function["name"]
        if name in namespace or name.startswith("_") or hasattr(WorldEnvironment, name):
            raise ValueError(f"tool {name!r} of world {world.WORLD} clashes with the "
                             "environment's own method reset")
        namespace[name] = _tool_method(name, function["description"], function["parameters"])
    return type(f"{world.WORLD}Environment", (WorldEnvironment,), namespace)


def _replies(completion: Any) -> list[str]:
    """What the agent said: the text of the completion's assistant messages."""
    if isinstance(completion, str):
        return [completion]
    said: list[str] = []
    for message in completion or []:
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                said.append(content)
    return said


def _scores(environments: Sequence[WorldEnvironment] | None,
            completions: Sequence[Any] | None) -> list[dict[str, Any]]:
    if environments is None:
        raise ValueError("the world's rewards read the rollouts' environments: pass "
                         "environment_factory to GRPOTrainer")
    replies = completions if completions is not None else [None] * len(environments)
    return [env._score(_replies(said)) for env, said in zip(environments, replies, strict=True)]


def reward_functions(world: type[Episode]) -> list[Callable[..., list[float | None]]]:
    """``task_reward`` and one ``check_NAME`` per check of the world's tasks, for
    ``GRPOTrainer(reward_funcs=...)``."""

    def task_reward(completions: Sequence[Any] | None = None,
                    environments: Sequence[WorldEnvironment] | None = None,
                    **_: Any) -> list[float | None]:
        return [float(score["reward"]) for score in _scores(environments, completions)]

    def check_reward(check: str) -> Callable[..., list[float | None]]:
        def reward(completions: Sequence[Any] | None = None,
                   environments: Sequence[WorldEnvironment] | None = None,
                   **_: Any) -> list[float | None]:
            rewards: list[float | None] = []
            for score in _scores(environments, completions):
                passed = [c["passed"] for c in score["checks"] if c["name"] == check]
                rewards.append(float(passed[0]) if passed else None)
            return rewards
        reward.__name__ = reward.__qualname__ = f"check_{check}"
        return reward

    names: list[str] = []
    for task in world.TASKS.values():
        for check in world(task=task.name).score(replies=[]).to_json()["checks"]:
            if check["name"] not in names:
                names.append(check["name"])
    return [task_reward, *(check_reward(name) for name in names)]


def task_dataset(world: type[Episode], *, split: str | None = None,
                 conversational: bool = False, policy: str | None = None) -> Any:
    """The world's tasks (those of ``split``, or all) as a ``datasets.Dataset`` in TRL's
    conversational prompt shape: ``prompt`` (system prompt, then the task's instruction as
    the user's message), ``task`` (what ``reset`` starts) and ``split``."""
    from datasets import Dataset

    rows = [{"prompt": [
                {"role": "system", "content": agent_system_prompt(
                    world, task.name, conversational=conversational, policy=policy)},
                {"role": "user", "content": task.instruction}],
             "task": task.name, "split": task.split}
            for task in world.TASKS.values() if split is None or task.split == split]
    if not rows:
        raise ValueError(f"world {world.WORLD} has no tasks"
                         + (f" in split {split!r}" if split is not None else ""))
    return Dataset.from_list(rows)
