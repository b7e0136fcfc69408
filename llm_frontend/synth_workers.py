"""The work of each ``synth`` batch on one item, as a worker does it (here or on a Ray actor).

Each function is a :data:`~llm_frontend.batch.ClientWork`: it gets the worker's model client,
a payload the driver prepared and a :class:`~worldspec.services.model_client.Usage` to add
its tokens to, and returns a picklable value that the driver settles into the item's record
(and outputs). They are module-level so a :class:`~llm_frontend.batch.ClientWorker` holding
one travels to a Ray worker by reference; nothing here touches a journal or writes an output.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.services.model_client import LLMClient, LLMOutputError, Usage

if TYPE_CHECKING:  # each worker imports what its kind needs (a themes worker: no compiler)
    from worldspec.llm_frontend.synth_tasks import TaskOptions, TaskOutcome, TaskWorld
    from worldspec.llm_frontend.synth_world import WorldOptions, WorldOutcome
    from worldspec.llm_frontend.themes import ThemeOptions

__all__ = ["TaskPayload", "ThemeVerdict", "task_work", "theme_work", "world_work"]


async def world_work(client: LLMClient, payload: tuple[str, WorldOptions],
                     spent: Usage) -> WorldOutcome:
    """One description to a world (the driver writes the file)."""
    from worldspec.llm_frontend.synth_world import synthesize_world

    description, options = payload
    return await synthesize_world(client, description, options, usage=spent)


@dataclass(frozen=True)
class TaskPayload:
    """One task slot, with what the driver knew when it sent it (the tasks accepted so far)."""

    world: TaskWorld
    slot: int
    options: TaskOptions
    written: Sequence[tuple[str, str]]
    taken: frozenset[str]


#: world text hash -> a copy of the world written on this worker (when its path is not here)
_LOCAL_COPIES: dict[str, Path] = {}


def _world_here(world: TaskWorld) -> TaskWorld:
    """``world`` as a file on this machine: its own path when that holds the same text (the
    driver's machine, a shared file system), else a copy under the same file name."""
    try:
        if world.path.read_text(encoding="utf-8") == world.text:
            return world
    except (OSError, UnicodeDecodeError):
        pass
    copy = _LOCAL_COPIES.get(world.sha256)
    if copy is None:
        folder = Path(tempfile.mkdtemp(prefix="worldspec-task-world-"))
        copy = folder / world.path.name
        copy.write_text(world.text, encoding="utf-8")
        _LOCAL_COPIES[world.sha256] = copy
    return replace(world, path=copy)


async def task_work(client: LLMClient, payload: TaskPayload, spent: Usage) -> TaskOutcome:
    """Write, check, validate and repair one task (the driver settles names and duplicates)."""
    from worldspec.llm_frontend.synth_tasks import synthesize_task

    world = _world_here(payload.world)
    outcome = await synthesize_task(client, world, payload.slot, payload.options,
                                    written=payload.written, taken=set(payload.taken),
                                    usage=spent)
    return outcome


@dataclass(frozen=True)
class ThemeVerdict:
    """An assessment as JSON (``model_dump``), or why the model never gave a valid one."""

    assessment: dict[str, Any] | None
    malformed: str = ""


async def theme_work(client: LLMClient, payload: tuple[str, ThemeOptions],
                     spent: Usage) -> ThemeVerdict:
    """Assess one corpus task (the driver filters, embeds and clusters)."""
    from worldspec.llm_frontend.themes import assess_task

    text, options = payload
    try:
        found = await assess_task(client, text, options, usage=spent)
    except LLMOutputError as exc:
        return ThemeVerdict(None, str(exc))
    return ThemeVerdict(found.model_dump())
