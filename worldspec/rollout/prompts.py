"""The two prompts of a rollout: the agent's system message and the simulated user's.

Both are ``string.Template`` texts (``$name`` placeholders), so a template file may hold
JSON, braces or code without escaping, and a value is never read as a template: what the
world or the task says is substituted once, as text. ``--system-prompt FILE`` and
``--user-prompt FILE`` replace the defaults; an unknown placeholder is left as written.

Agent placeholders: ``$world`` (the world's name), ``$world_doc`` (its one-line description),
``$policy`` (the world's policy text, ``POLICY`` on the generated class: empty when the world
has none), ``$clock`` (the episode's clock, ISO text), ``$setting`` (how the conversation goes:
one request at once, or a user in a chat), ``$task`` (the task's name).

User placeholders: ``$persona``, ``$instruction``, ``$known``, ``$unknown`` (from the task),
``$stop`` (the marker that ends the conversation), ``$world`` and ``$world_doc``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from worldspec.runtime.episode import Episode, TaskSpec

__all__ = ["AGENT_TEMPLATE", "GREETING", "SETTINGS", "STOP_MARKER", "USER_TEMPLATE",
           "agent_system_prompt", "fill", "user_system_prompt"]

#: The simulated user ends the conversation by writing this (tau2-bench's marker).
STOP_MARKER = "###STOP###"

#: The agent's first message in a conversation, before the user says anything.
GREETING = "Hi! How can I help you today?"

AGENT_TEMPLATE = """\
You are an assistant operating $world: $world_doc
$policy
The current time is $clock.

Use the tools to read and change the state of $world. Look up what you need before you act, \
follow the rules the tools enforce, and never make up ids or facts a tool has not told you. \
$setting
"""

#: ``$setting`` by mode: the agent is told whether anyone will answer its questions.
SETTINGS: Mapping[bool, str] = {
    False: "The user's request is in the next message and nobody will answer questions: "
           "carry it out with the tools, then reply with a short summary of what you did "
           "(a reply without tool calls ends your work).",
    True: "You are chatting with a user. Ask them for what you need and confirm what you are "
          "about to change; each reply without tool calls is sent to the user, who answers.",
}

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


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with ``values`` substituted once; unknown placeholders stay as written."""
    return string.Template(template).safe_substitute(values)


def _world_doc(world: type[Episode]) -> str:
    module_doc = (world.__doc__ or "").strip().splitlines()
    text = module_doc[0] if module_doc else ""
    prefix = f"{world.WORLD}: "
    return (text[len(prefix):] if text.startswith(prefix) else text) or world.WORLD


def agent_system_prompt(episode: Episode, task: str, *, conversational: bool,
                        template: str = AGENT_TEMPLATE) -> str:
    """The agent's system message for ``task`` in ``episode`` (read after its reset)."""
    world = type(episode)
    policy = str(getattr(world, "POLICY", "") or "").strip()
    values = {
        "world": world.WORLD,
        "world_doc": _world_doc(world),
        "policy": f"\n{policy}\n" if policy else "",
        "clock": episode.clock.isoformat(),
        "setting": SETTINGS[conversational],
        "task": task,
    }
    return fill(template, values)


def user_system_prompt(world: type[Episode], spec: TaskSpec, *,
                       template: str = USER_TEMPLATE) -> str:
    """The simulated user's system message: the task as the user knows it, nothing of the
    world's state or tools."""
    values = {
        "world": world.WORLD,
        "world_doc": _world_doc(world),
        "persona": (spec.persona or "an ordinary user of the service").strip(),
        "instruction": spec.instruction.strip(),
        "known": (spec.known or "what the request above says").strip(),
        "unknown": (spec.unknown or "anything else").strip(),
        "stop": STOP_MARKER,
    }
    return fill(template, values)
