"""The simulated user's prompt; the agent's comes from :mod:`worldspec.services.prompts`.

The agent's system prompt is built in one place, below every front end, so that rollouts,
the step API, the adapters, the MCP server and the exported datasets give the same text for
the same task and setting; this module re-exports its template and greeting.

The user's template is ``string.Template`` text (``$name`` placeholders), substituted once;
``--user-prompt FILE`` replaces it and an unknown placeholder is left as written.
Placeholders: ``$persona``, ``$instruction``, ``$known``, ``$unknown`` (from the task),
``$stop`` (the marker that ends the conversation), ``$world`` and ``$world_doc``.
"""

from __future__ import annotations

from worldspec.runtime.episode import Episode, TaskSpec
from worldspec.services.prompts import AGENT_TEMPLATE, GREETING, fill, world_doc

__all__ = ["AGENT_TEMPLATE", "GREETING", "STOP_MARKER", "USER_TEMPLATE", "user_system_prompt"]

#: The simulated user ends the conversation by writing this (tau2-bench's marker).
STOP_MARKER = "###STOP###"

USER_TEMPLATE = """\
You are playing a user who chats with the assistant of a service ($world: $world_doc). \
You are not the assistant: write only what the user says next, one message at a time, \
in the first person, briefly.

Who you are: $persona
What you want: $instruction
What you know (tell it when asked): $known
What you do not know (never make it up): $unknown

Rules:
- Do not give everything at once; answer what the assistant asks.
- You do not see the assistant's tools or data. Do not invent ids, numbers or facts.
- When what you want is done, or cannot be done, write $stop on its own line to end the chat.
"""


def user_system_prompt(world: type[Episode], spec: TaskSpec, *,
                       template: str = USER_TEMPLATE) -> str:
    """The simulated user's system message: the task as the user knows it, nothing of the
    world's state or tools."""
    values = {
        "world": world.WORLD,
        "world_doc": world_doc(world),
        "persona": (spec.persona or "an ordinary user of the service").strip(),
        "instruction": spec.instruction.strip(),
        "known": (spec.known or "what the request above says").strip(),
        "unknown": (spec.unknown or "anything else").strip(),
        "stop": STOP_MARKER,
    }
    return fill(template, values)
