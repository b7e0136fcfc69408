"""The options that shape the agent's prompt, the same on every command that shows it.

``worldspec rollout``, ``worldspec export`` and ``worldspec serve`` take ``--conversational``
(the setting), ``--policy FILE`` (an external policy text that replaces the world's own) and
``--system-prompt FILE`` (the template), and hand them to :mod:`worldspec.services.prompts`,
so the prompt a model is trained on and the one it is evaluated with are built alike.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Protocol

from worldspec.cli.console import Console
from worldspec.services.prompts import AGENT_TEMPLATE, PromptFileError, read_prompt_file

__all__ = ["PromptOptions", "add_prompt_options", "read_prompt_options"]

#: the help of each option, by its flag (``--conversational`` is the rollout's own wording)
_HELP = {
    "--conversational": "the prompt for a conversation with a user (default: one-shot, the "
                        "instruction given at once)",
    "--policy": "an external policy text (e.g. a benchmark's own policy.md) that replaces "
                "the world's policy in the agent's prompt",
    "--system-prompt": "the agent's system prompt template (see docs/rollouts.md)",
}


class _Options(Protocol):
    """A parser or an argument group: whatever takes ``add_argument``."""

    def add_argument(self, *names: str, **options: Any) -> Any: ...


@dataclass(frozen=True)
class PromptOptions:
    """The prompt options as read: the template's text and the external policy, if any."""

    template: str
    policy: str | None


def add_prompt_options(group: _Options, *,
                       conversational_help: str | None = None) -> None:
    """``--conversational``, ``--policy FILE`` and ``--system-prompt FILE`` on ``group``."""
    group.add_argument("--conversational", action="store_true",
                       help=conversational_help or _HELP["--conversational"])
    group.add_argument("--policy", metavar="FILE", help=_HELP["--policy"])
    group.add_argument("--system-prompt", metavar="FILE", help=_HELP["--system-prompt"])


def read_prompt_options(args: argparse.Namespace, console: Console) -> PromptOptions | None:
    """The template and the policy the options name, or ``None`` after saying on stderr
    which file cannot be read."""
    try:
        template = (AGENT_TEMPLATE if args.system_prompt is None
                    else read_prompt_file(args.system_prompt, "prompt template"))
        policy = None if args.policy is None else read_prompt_file(args.policy, "policy file")
    except PromptFileError as exc:
        console.error(str(exc))
        return None
    return PromptOptions(template, policy)
