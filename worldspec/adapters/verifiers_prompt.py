"""A task's opening as a verifiers task row holds it: ``system_prompt`` and ``prompt``.

verifiers keeps a task's system prompt apart from its prompt (the messages after it). The
adapter (:mod:`worldspec.adapters.verifiers`) fills both from the opening every front end
builds (:func:`worldspec.services.prompts.opening_messages`), so the dataset a trainer reads
says what the harness shows the model. This module needs no verifiers, so the main test run
checks the split against the other front ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worldspec.runtime.episode import Episode
from worldspec.services.prompts import AGENT_TEMPLATE, opening_messages

__all__ = ["VerifiersPrompt", "verifiers_prompt"]


@dataclass(frozen=True)
class VerifiersPrompt:
    """``system_prompt`` and ``prompt`` of a verifiers task: the instruction as text
    (one-shot), or the agent's greeting as a message list (a conversation, where the
    simulated user speaks next)."""

    system_prompt: str
    prompt: str | list[dict[str, Any]]

    def messages(self) -> list[dict[str, Any]]:
        """The opening as chat messages, as verifiers puts the two back together."""
        rest = ([{"role": "user", "content": self.prompt}] if isinstance(self.prompt, str)
                else [dict(m) for m in self.prompt])
        return [{"role": "system", "content": self.system_prompt}, *rest]


def verifiers_prompt(world: type[Episode], task: str, *, conversational: bool,
                     policy: str | None = None, template: str = AGENT_TEMPLATE
                     ) -> VerifiersPrompt:
    """The verifiers fields of ``task``'s opening in the given setting."""
    system, *rest = opening_messages(world, task, conversational=conversational,
                                     policy=policy, template=template)
    prompt: str | list[dict[str, Any]] = rest
    if not conversational:
        prompt = str(rest[0]["content"])
    return VerifiersPrompt(str(system["content"]), prompt)
