"""Agents in worlds: rollouts, trajectories and rewards (``worldspec rollout``).

A front end: it drives compiled worlds (through :mod:`worldspec.runtime` and
:mod:`worldspec.services.loading`, never the compiler when given a generated package) with
models behind any OpenAI-compatible endpoint (:mod:`worldspec.services.model_client`).

- :mod:`~worldspec.rollout.session`: the turn logic of one episode, model-free (also the base
  of a step API for trainers);
- :mod:`~worldspec.rollout.prompts`: the simulated user's prompt template (the agent's prompt
  is built for every front end by :mod:`worldspec.services.prompts`);
- :mod:`~worldspec.rollout.user`: what the simulated user is shown (roles turned round);
- :mod:`~worldspec.rollout.agent`: tool-calling turns over Chat Completions or Responses;
- :mod:`~worldspec.rollout.runner`: tasks x samples, concurrency, seeds, the journal;
- :mod:`~worldspec.rollout.records`, :mod:`~worldspec.rollout.summary`: the record format,
  the journal, and the per-task / per-world figures (pass^k);
- :mod:`~worldspec.rollout.export`, :mod:`~worldspec.rollout.view`: SFT data and an HTML report.

See ``docs/rollouts.md``.
"""

from __future__ import annotations

__all__: list[str] = []
