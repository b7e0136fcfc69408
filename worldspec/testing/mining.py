"""Drawing what an agent could do from a start state: seeded runs of state-changing calls.

Task mining starts here. From a start state (a task's initial data) the miner draws
seeded sequences of one to four state-changing calls that all succeed and each
change something, with arguments drawn as the explorer draws them (keys of the
rows in the state, values of the start state and of what earlier calls returned
or wrote: :func:`~worldspec.testing.explore.draw_arguments`). Each such run is a
goal an agent could reach; :mod:`worldspec.services.mining` turns it into a task
(checks from its diff, reads that show the keys it names, a validated text).

:func:`careless_failures` scores how unforgiving a state is for the tools of a
run: of a few calls of each tool with plausible arguments drawn from the start
state, how many fail (an agent that does not look before it writes meets them).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worldspec.runtime.episode import Episode
from worldspec.testing.explore import Call, draw_arguments, remember_results, start_pools

__all__ = ["WriteRun", "careless_failures", "draw_write_runs"]

#: draws of a tool tried for each step of a run before the run ends where it is
_TRIES_PER_STEP = 16
#: calls of each tool drawn by :func:`careless_failures`
_CARELESS_DRAWS = 8


@dataclass(frozen=True)
class WriteRun:
    """State-changing calls that all succeed, in order, from one start state."""

    calls: tuple[Call, ...]
    #: the seed the run was drawn with (its rng is ``random.Random(seed)``)
    seed: int

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.calls)


def _writing_tools(world: type[Episode]) -> list[str]:
    return [name for name, spec in world.TOOLS.items() if not spec.read_only]


def draw_write_runs(world: type[Episode], data: Mapping[str, Any], *, seed: int = 0,
                    runs: int = 100, max_calls: int = 4) -> Iterator[WriteRun]:
    """Up to ``runs`` runs of 1 to ``max_calls`` state-changing calls from ``data``, each call
    successful and changing the state (a run whose first step finds no such call is left
    out). Deterministic for a seed."""
    tools = _writing_tools(world)
    if not tools:
        return
    episode = world(data=data)
    base = start_pools(world, episode, data)
    for index in range(runs):
        run_seed = seed * 1_000_003 + index
        rng = random.Random(run_seed)
        episode.reset(data=data)
        pools = base.fork()
        wanted = rng.randint(1, max_calls)
        calls: list[Call] = []
        for _ in range(wanted):
            call = _one_write(world, episode, rng, pools, tools)
            if call is None:
                break
            calls.append(call)
        if calls:
            yield WriteRun(tuple(calls), run_seed)


def _one_write(world: type[Episode], episode: Episode, rng: random.Random, pools: Any,
               tools: Sequence[str]) -> Call | None:
    """A state-changing call that succeeds in ``episode`` (made there), or None."""
    for _ in range(_TRIES_PER_STEP):
        spec = world.TOOLS[rng.choice(tools)]
        args = draw_arguments(spec, episode, rng, pools)
        mark = len(episode._undo)
        before = episode.state_hash()
        episode.call(spec.name, dict(args))
        if episode.last_error is not None:
            continue
        if episode.state_hash() == before:  # it succeeded and changed nothing: no goal
            continue
        remember_results(pools, episode, mark)
        return (spec.name, args)
    return None


def careless_failures(world: type[Episode], data: Mapping[str, Any], tools: Sequence[str],
                      *, seed: int = 0, draws: int = _CARELESS_DRAWS) -> int:
    """Of ``draws`` calls of each of ``tools`` (once per distinct tool) with arguments drawn
    from ``data``'s state, how many fail."""
    episode = world(data=data)
    pools = start_pools(world, episode, data)
    rng = random.Random(seed)
    failed = 0
    for name in dict.fromkeys(tools):
        spec = world.TOOLS[name]
        for _ in range(draws):
            episode.reset(data=data)
            episode.call(name, dict(draw_arguments(spec, episode, rng, pools.fork())))
            failed += episode.last_error is not None
    return failed
