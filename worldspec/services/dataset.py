"""Tasks as training rows: the shape RL and SFT frameworks load (one row per task).

Every row has the same columns and column types, so the rows load as a
table with the Hugging Face ``datasets`` library: nested data that varies
from world to world (tool schemas, initial state, solution) is stored as JSON
text. A row carries what is needed to rebuild the episode and score it:
the world and task names, the hash of the compiled world, and the initial
state itself.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from worldspec.compiler.model import WorldModel
from worldspec.runtime.episode import Episode

__all__ = ["task_rows", "system_prompt", "COLUMNS"]

#: The columns of every row, in order.
COLUMNS = ("world", "task_id", "split", "prompt", "tools", "tags", "persona", "known",
           "unknown", "initial_state", "solution", "checks", "frame", "world_sha256",
           "reward_spec")


def system_prompt(world: type[Episode], model: WorldModel) -> str:
    """The agent's system message: what the world is and how to act in it."""
    doc = (model.doc or world.WORLD).strip()
    prompt = (f"You operate {world.WORLD}: {doc}\n"
              "Use the tools to read and change its state. Check what you need before you act, "
              "follow the rules the tools enforce, and finish when the user's request is done.")
    # the world's policy (``policy`` in the spec): the rules the tools do not enforce
    return f"{prompt}\n\n{world.POLICY}" if world.POLICY else prompt


def _world_hash(world: type[Episode]) -> str:
    tools = json.dumps(world().tools("chat"), sort_keys=True)
    return hashlib.sha256(f"{world.WORLD}\0{tools}".encode()).hexdigest()


def task_rows(world: type[Episode], model: WorldModel) -> list[dict[str, Any]]:
    """One row per task of ``world``, in declaration order."""
    tools = json.dumps(world().tools("chat"), ensure_ascii=False, sort_keys=True)
    digest = _world_hash(world)
    rows = []
    for name, task in world.TASKS.items():
        rows.append({
            "world": world.WORLD,
            "task_id": name,
            "split": task.split or "train",
            "prompt": [{"role": "system", "content": system_prompt(world, model)},
                       {"role": "user", "content": task.instruction}],
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
