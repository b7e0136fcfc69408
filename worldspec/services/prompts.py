"""The agent's system prompt, built in one place for training and evaluation alike.

Every front end that shows an agent a task asks this module for the agent's prompt:
``worldspec rollout`` (one-shot and conversational), the step API (:class:`~worldspec.rl.env.
TextEnv`), the verifiers and OpenEnv adapters, the MCP server's instructions and ``worldspec
export`` (task rows, and through the rollout records the exported trajectories). So a model
trained on exported rows sees, word for word, the prompt it is evaluated with.

The prompt is made of the world (its name and one-line description), its policy (the spec's
``policy``, or an external policy text given with ``--policy FILE``, which replaces it), the
episode's clock, and the *setting*: ``one-shot`` (the task's instruction is the only user
message and nobody answers questions) or ``conversational`` (a user chats with the agent).

The template is ``string.Template`` text (``$name`` placeholders), so a template file may hold
JSON, braces or code without escaping, and a value is never read as a template: what the world
or the policy says is substituted once, as text. ``--system-prompt FILE`` replaces the default;
an unknown placeholder is left as written. Placeholders: ``$world`` (the world's name),
``$world_doc`` (its one-line description), ``$policy`` (the policy framed by line breaks,
empty when there is none), ``$policy_text`` (the policy exactly as given, e.g. a policy file's
bytes), ``$clock`` (the episode's clock, ISO text), ``$setting`` (how the conversation goes),
``$task`` (the task's name; empty without a task).
"""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from worldspec.runtime.episode import Episode
from worldspec.services.files import read_text_file

__all__ = ["AGENT_TEMPLATE", "GREETING", "SETTINGS", "SETTING_TEXTS", "PromptFileError",
           "Setting", "agent_system_prompt", "fill", "opening_messages", "read_prompt_file",
           "setting_name", "world_doc"]

#: How the conversation goes: the instruction given at once, or a user chatting turn by turn.
Setting = Literal["one-shot", "conversational"]

#: The settings, indexed by ``conversational`` (``SETTINGS[False] == "one-shot"``).
SETTINGS: tuple[Setting, Setting] = ("one-shot", "conversational")

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

#: ``$setting`` by setting: the agent is told whether anyone will answer its questions.
SETTING_TEXTS: Mapping[Setting, str] = {
    "one-shot": "The user's request is in the next message and nobody will answer questions: "
                "carry it out with the tools, then reply with a short summary of what you did "
                "(a reply without tool calls ends your work).",
    "conversational": "You are chatting with a user. Ask them for what you need and confirm "
                      "what you are about to change; each reply without tool calls is sent to "
                      "the user, who answers.",
}


class PromptFileError(ValueError):
    """A policy or prompt template file that cannot be read (its message says why)."""


def setting_name(conversational: bool) -> Setting:
    """The setting's name: ``conversational`` or ``one-shot``."""
    return SETTINGS[conversational]


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with ``values`` substituted once; unknown placeholders stay as written."""
    return string.Template(template).safe_substitute(values)


def world_doc(world: type[Episode]) -> str:
    """The world's one-line description (the first line of its ``DESCRIPTION``, the spec's
    doc; a class that has none, written by hand, gives its docstring's, without a ``Name:``
    prefix); the world's name when it has none."""
    lines = (world.DESCRIPTION or world.__doc__ or "").strip().splitlines()
    text = lines[0] if lines else ""
    prefix = f"{world.WORLD}: "
    return (text[len(prefix):] if text.startswith(prefix) else text) or world.WORLD


def agent_system_prompt(world: type[Episode], task: str | None, *, conversational: bool,
                        policy: str | None = None, template: str = AGENT_TEMPLATE) -> str:
    """The agent's system message for ``task`` of ``world`` in the given setting.

    ``policy`` is an external policy text that replaces the world's own (``POLICY``, from the
    spec's ``policy``); ``None`` keeps the world's. The clock is the one every episode of the
    world starts with.
    """
    text = world.POLICY if policy is None else policy
    framed = text.strip()
    values = {
        "world": world.WORLD,
        "world_doc": world_doc(world),
        "policy": f"\n{framed}\n" if framed else "",
        "policy_text": text,
        "clock": dt.datetime.fromisoformat(world.CLOCK).isoformat(),
        "setting": SETTING_TEXTS[setting_name(conversational)],
        "task": task or "",
    }
    return fill(template, values)


def opening_messages(world: type[Episode], task: str, *, conversational: bool,
                     policy: str | None = None, template: str = AGENT_TEMPLATE
                     ) -> list[dict[str, Any]]:
    """The messages an episode of ``task`` opens with: the system prompt, then the task's
    instruction as the user (one-shot) or the agent's greeting (a conversation, where the
    simulated user speaks next)."""
    system = agent_system_prompt(world, task, conversational=conversational, policy=policy,
                                 template=template)
    second = ({"role": "assistant", "content": GREETING} if conversational else
              {"role": "user", "content": world.TASKS[task].instruction.strip()})
    return [{"role": "system", "content": system}, second]


#: the largest policy or template file read (far above any prompt a model takes)
MAX_PROMPT_BYTES = 16_000_000


def read_prompt_file(path: str | Path, what: str) -> str:
    """The text of a policy or template file, exactly as written (UTF-8); a file that cannot
    be read is a :class:`PromptFileError` naming ``what`` it was meant to be."""
    try:
        return read_text_file(path, limit=MAX_PROMPT_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise PromptFileError(f"cannot read the {what} '{path}': {reason}") from None
