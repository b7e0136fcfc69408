"""The simulated user's side of a conversation, model-free: what it is shown and what it said.

The user model is given the task as the user knows it (its system prompt, from
:func:`~worldspec.rollout.prompts.user_system_prompt`) and the conversation with the roles
turned round: the agent's words arrive as ``user`` messages and its own replies are kept as
``assistant`` messages. It never sees the world's state, the tools, or any tool traffic, only
what the agent said to it. The runner and a trainer's step API both drive a
:class:`~worldspec.rollout.session.Session` with this object, so they show the user model
the same thing::

    user = SimulatedUser.for_task(World, spec)
    request = user.hear(session.messages[-1])    # messages to send to the user model
    session.user(user.said(reply_text))          # feed the reply to the session
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from worldspec.rollout.prompts import USER_TEMPLATE, user_system_prompt
from worldspec.runtime.episode import Episode, TaskSpec

__all__ = ["SimulatedUser"]


@dataclass
class SimulatedUser:
    """The user model's conversation: its system prompt, then turns with roles reversed."""

    messages: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def for_task(cls, world: type[Episode], spec: TaskSpec, *,
                 template: str = USER_TEMPLATE) -> SimulatedUser:
        system = user_system_prompt(world, spec, template=template)
        return cls([{"role": "system", "content": system}])

    def hear(self, agent_message: Mapping[str, Any]) -> list[dict[str, str]]:
        """Take the agent's message (its text only) and return what to send the user model."""
        content = agent_message.get("content")
        self.messages.append({"role": "user", "content": content if isinstance(content, str)
                              else ""})
        return list(self.messages)

    def said(self, text: str) -> str:
        """Remember the user model's reply; return it, for :meth:`Session.user`."""
        self.messages.append({"role": "assistant", "content": text})
        return text
