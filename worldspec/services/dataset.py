"""Tasks as training rows: the shape RL and SFT frameworks load (one row per task).

Every row has the same columns and column types, so the rows load as a
table with the Hugging Face ``datasets`` library: nested data that varies
from world to world (tool schemas, initial state, solution) is stored as JSON
text. A row carries what is needed to rebuild the episode and score it:
the world and task names, the hash of the compiled world, and the initial
state itself.

The ``prompt`` is the episode's opening as :mod:`worldspec.services.prompts` builds it for
every front end (rollouts, the step API, the adapters, the MCP server): the agent's system
prompt, then the instruction (``one-shot``) or the agent's greeting (``conversational``, where
a simulated user who knows ``persona``, ``known`` and ``unknown`` speaks next). ``setting``
says which.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from worldspec.runtime.episode import Episode
from worldspec.services.prompts import AGENT_TEMPLATE, opening_messages, setting_name

__all__ = ["task_rows", "world_sha256", "COLUMNS"]

#: The columns of every row, in order.
COLUMNS = ("world", "task_id", "split", "setting", "prompt", "tools", "tags", "persona",
           "known", "unknown", "initial_state", "solution", "checks", "frame", "world_sha256",
           "reward_spec")


#: files of a generated package that are not the world's behaviour
_NOT_BEHAVIOUR = frozenset({"test_world.py"})


def world_sha256(world: type[Episode]) -> str:
    """SHA-256 of the compiled world: the text of its generated package.

    The package (``world.py`` with the tools' bodies, invariants, checks and tasks, and the
    task data files beside it) is what decides behaviour, so any change to a rule, a tool body
    or a task changes the hash, where names and schemas alone would not. A world class that
    does not come from a package file (built in memory) falls back on its name and schemas.
    """
    module = sys.modules.get(world.__module__)
    source = getattr(module, "__file__", None)
    digest = hashlib.sha256()
    if source:
        folder = Path(source).parent
        files = sorted(p for p in folder.rglob("*")
                       if p.is_file() and p.name not in _NOT_BEHAVIOUR
                       and "__pycache__" not in p.parts and p.suffix in (".py", ".json"))
        for path in files:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        return digest.hexdigest()
    tools = json.dumps(world().tools("chat"), sort_keys=True)
    return hashlib.sha256(f"{world.WORLD}\0{tools}".encode()).hexdigest()


def task_rows(world: type[Episode], *, conversational: bool = False,
              policy: str | None = None, template: str = AGENT_TEMPLATE
              ) -> list[dict[str, Any]]:
    """One row per task of ``world``, in declaration order, for the given setting; ``policy``
    (an external policy text) and ``template`` shape the prompt as they do a rollout's."""
    tools = json.dumps(world().tools("chat"), ensure_ascii=False, sort_keys=True)
    digest = world_sha256(world)
    rows = []
    for name, task in world.TASKS.items():
        rows.append({
            "world": world.WORLD,
            "task_id": name,
            "split": task.split or "train",
            "setting": setting_name(conversational),
            "prompt": opening_messages(world, name, conversational=conversational,
                                       policy=policy, template=template),
            "tools": tools,
            "tags": list(task.tags),
            "persona": task.persona or "",
            "known": task.known or "",
            "unknown": task.unknown or "",
            "initial_state": json.dumps(task.data, ensure_ascii=False, sort_keys=True),
            "solution": json.dumps([{"name": n, "arguments": dict(a)} for n, a in task.solution],
                                   ensure_ascii=False),
            "checks": [{"name": c.name, "weight": c.weight, "doc": c.doc} for c in task.checks],
            "frame": json.dumps(list(task.frame) if task.frame is not None else None),
            "world_sha256": digest,
            "reward_spec": json.dumps({
                "how": "worldspec.load_world(spec) -> World(task=task_id); replay the "
                       "agent's tool calls with episode.call(name, arguments); "
                       "episode.score(replies=[the agent's messages to the user]).reward",
                "world": world.WORLD, "task": name,
            }),
        })
    return rows
