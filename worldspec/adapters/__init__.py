"""Adapters from worlds to other frameworks' environment contracts (a front end).

Each module imports its framework at the top, so nothing here is imported unless used:
:mod:`~worldspec.adapters.verifiers` (the ``verifiers`` extra) and
:mod:`~worldspec.adapters.openenv` (the ``openenv`` extra). Both sit on
:mod:`worldspec.rl` (the rollout runner's turn logic) and load a generated package without
the compiler. See ``docs/serving.md``.
"""

from __future__ import annotations

__all__: list[str] = []
