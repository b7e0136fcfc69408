"""One prompt for training and evaluation: every front end shows the agent the same opening.

For the same world, task and setting, the agent's system prompt (and the message after it)
must be identical whether it comes from ``worldspec rollout`` (the record, and the request the
model received), the step API (``TextEnv``), the verifiers adapter's task row, the MCP server's
instructions (``worldspec serve``), ``worldspec export`` (task rows) or ``worldspec export
--trajectories`` (SFT rows). Checked for a world with a policy, one without, and one given an
external policy and template (``--policy``, ``--system-prompt``), in both settings. OpenEnv
serves ``TextEnv``'s opening; its own equality test runs with the framework
(``tests/adapters/test_openenv.py``), as does the verifiers one (``test_verifiers.py``).

With tau2's ``policy.md`` (a tau2-bench checkout, ``$WORLDSPEC_TAU2_CHECKOUT``, or the peer
material, ``$WORLDSPEC_PEERS/tau2-retail``, default ``../shared/peers``; under
``CI=true`` its absence fails), the τ² example's prompt carries τ²'s own policy.md verbatim,
wrapped as τ² wraps it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer
from tau2_data import locate_tau2

from worldspec.adapters.verifiers_prompt import verifiers_prompt
from worldspec.cli.main import main
from worldspec.rl import TextEnv
from worldspec.rollout.prompts import STOP_MARKER
from worldspec.rollout.records import read_records
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world
from worldspec.services.model_client import LLMClient, LLMConfig
from worldspec.services.prompts import GREETING, SETTING_TEXTS, read_prompt_file

ROOT = Path(__file__).resolve().parents[1]
TAU2_POLICY = locate_tau2().policy
TAU2_TEMPLATE = ROOT / "examples" / "tau2" / "tau2_agent_prompt.txt"
IN_CI = os.environ.get("CI", "").lower() == "true"

#: an external policy written for the test (a file the options name)
EXTERNAL_POLICY = "# House rules\n\nArchive nothing the user did not name.\n"


@dataclass(frozen=True)
class Case:
    """A world (its package and its spec), a task, and the prompt options to give."""

    package: str
    spec: str
    task: str
    external: bool = False


CASES = {
    "world_policy": Case("generated/mobile_messaging", "examples/messaging", "tidy_archive"),
    "no_policy": Case("generated/online_shop", "examples/shop", "cancel_and_reorder"),
    "external_policy": Case("generated/mobile_messaging", "examples/messaging",
                            "tidy_archive", external=True),
}

Opening = list[tuple[str, str]]


def _opening(messages: list[dict[str, Any]]) -> Opening:
    """The first two messages as (role, text): what every front end must agree on."""
    return [(str(m["role"]), str(m["content"])) for m in messages[:2]]


def _responder(world: type[Episode], task: str) -> Any:
    """The agent answers at once without tools; the simulated user states the instruction,
    then stops."""
    instruction = world.TASKS[task].instruction.strip()

    def respond(request: RecordedRequest) -> Reply | str:
        if request.body.get("tools"):
            return "Nothing to do."
        heard = sum(1 for m in request.messages if m.get("role") == "user")
        return instruction if heard == 1 else f"Thanks.\n{STOP_MARKER}"

    return respond


def _mcp_instructions(package: str, task: str | None, options: list[str]) -> str:
    """The instructions ``worldspec serve`` sends when a session initializes (stdio)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    chosen = ["--task", task] if task is not None else []
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldspec", "serve", package, *chosen, *options], cwd=str(ROOT))

    async def go() -> str:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                result = await session.initialize()
                return str(result.instructions)

    return asyncio.run(asyncio.wait_for(go(), timeout=90))


def _text_env_opening(world: type[Episode], task: str, config: LLMConfig,
                      conversational: bool, policy: str | None, template: str | None
                      ) -> list[dict[str, Any]]:
    options: dict[str, Any] = {"policy": policy}
    if template is not None:
        options["system_template"] = template
    if not conversational:
        return TextEnv(world, **options).reset(task)[0]

    async def go() -> list[dict[str, Any]]:
        async with LLMClient(config) as user:
            env = TextEnv(world, conversational=True, user=user, **options)
            messages, _ = await env.areset(task)
            return messages

    return asyncio.run(go())


@pytest.mark.parametrize("conversational", [False, True], ids=["one_shot", "conversational"])
@pytest.mark.parametrize("case_name", list(CASES))
def test_every_front_end_gives_the_same_opening(
        case_name: str, conversational: bool, llm_server: ScriptedLLMServer,
        llm_config: LLMConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[case_name]
    world = load_world(ROOT / case.package)
    setting = "conversational" if conversational else "one-shot"
    options = ["--conversational"] if conversational else []
    policy = template = None
    if case.external:
        policy_file = tmp_path / "policy.md"
        policy_file.write_text(EXTERNAL_POLICY, encoding="utf-8")
        template_file = tmp_path / "template.txt"
        template_file.write_text("You run $world ($setting) at $clock.\n<policy>\n"
                                 "$policy_text\n</policy>", encoding="utf-8")
        options += ["--policy", str(policy_file), "--system-prompt", str(template_file)]
        policy, template = EXTERNAL_POLICY, read_prompt_file(template_file, "template")
    llm_server.responder = _responder(world, case.task)

    # worldspec rollout: the record, and what the agent's model received
    runs = tmp_path / "runs"
    assert main(["rollout", case.package, "--task", case.task, "--base-url", llm_server.url,
                 "--model", "scripted-model", "-o", str(runs), "--progress", "never",
                 *options]) == 0
    (record,) = read_records(runs)
    agent_request = next(r for r in llm_server.chat_requests if r.body.get("tools"))
    # worldspec export --trajectories: the SFT row of that record
    sft = tmp_path / "sft.jsonl"
    assert main(["export", "--trajectories", str(runs), "--min-reward", "0",
                 "-o", str(sft)]) == 0
    (sft_row,) = [json.loads(line) for line in sft.read_text(encoding="utf-8").splitlines()]
    # worldspec export: the task's row
    rows_file = tmp_path / "rows.jsonl"
    assert main(["export", case.spec, "-o", str(rows_file), *options]) == 0
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    (task_row,) = [r for r in rows if r["task_id"] == case.task]
    capsys.readouterr()

    openings = {
        "rollout record": _opening(record["messages"]),
        "TextEnv": _opening(_text_env_opening(world, case.task, llm_config, conversational,
                                              policy, template)),
        "verifiers task": _opening(verifiers_prompt(
            world, case.task, conversational=conversational, policy=policy,
            **({"template": template} if template is not None else {})).messages()),
        "export task row": _opening(task_row["prompt"]),
        "export trajectory": _opening(sft_row["messages"]),
    }
    expected = openings["rollout record"]
    assert {name: got for name, got in openings.items() if got != expected} == {}
    system = expected[0][1]
    assert agent_request.messages[0] == {"role": "system", "content": system}
    assert _mcp_instructions(case.package, case.task, options) == system
    # the opening is this setting's, and the policy the one asked for
    second = ("assistant", GREETING) if conversational else \
        ("user", world.TASKS[case.task].instruction.strip())
    assert expected[1] == second
    assert record["setting"] == sft_row["setting"] == task_row["setting"] == setting
    if case.external:
        assert system.startswith(f"You run {world.WORLD} ({SETTING_TEXTS[setting]}) at ")
        assert f"<policy>\n{EXTERNAL_POLICY}\n</policy>" in system
        assert world.POLICY.strip() not in system
    else:
        assert SETTING_TEXTS[setting] in system
        has_policy = case_name == "world_policy"
        assert (world.POLICY != "") == has_policy
        assert (has_policy and world.POLICY.strip() in system) or \
            (not has_policy and f"{world.WORLD}: " in system and "\n\nThe current time" in system)


def test_the_same_options_in_another_setting_give_another_prompt(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    """The setting is part of the prompt: one-shot rows do not pass for conversational ones."""
    out = {}
    for setting, options in (("one-shot", []), ("conversational", ["--conversational"])):
        path = tmp_path / f"{setting}.jsonl"
        assert main(["export", "examples/messaging", "-o", str(path), *options]) == 0
        out[setting] = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    one_shot, chat = out["one-shot"], out["conversational"]
    assert one_shot["prompt"][0]["content"] != chat["prompt"][0]["content"]
    assert [m["role"] for m in one_shot["prompt"]] == ["system", "user"]
    assert [m["role"] for m in chat["prompt"]] == ["system", "assistant"]


# --------------------------------------------------------------------- tau2
def _tau2_policy() -> str:
    if not TAU2_POLICY.is_file():
        message = locate_tau2().missing()
        pytest.fail(message) if IN_CI else pytest.skip(message)
    return TAU2_POLICY.read_text(encoding="utf-8")


def test_the_tau2_example_can_give_tau2s_own_policy_as_tau2_does() -> None:
    peer_policy = _tau2_policy()
    options = ["--conversational", "--policy", str(TAU2_POLICY),
               "--system-prompt", str(TAU2_TEMPLATE)]
    prompt = _mcp_instructions("generated/tau2_retail", None, options)
    assert peer_policy in prompt
    # as tau2's LLMAgent gives it: its instructions, then the policy.md as read, in tags
    assert prompt.startswith("<instructions>\nYou are a customer service agent")
    assert prompt.endswith(f"<policy>\n{peer_policy}\n</policy>")
    # without the options, the example's own policy (our words) is the prompt's
    world = load_world(ROOT / "generated" / "tau2_retail")
    own = _mcp_instructions("generated/tau2_retail", None, ["--conversational"])
    assert world.POLICY in own and peer_policy.strip() not in own



def test_the_repository_holds_no_copy_of_tau2s_policy() -> None:
    """τ²'s policy.md is read from the peer material, never copied: no sentence of it (a
    line of over 60 characters) is in a file of the repository; the prompt built from the
    peer file has every one of them."""
    peer_policy = _tau2_policy()
    sentences = [line for line in peer_policy.splitlines() if len(line) > 60]
    assert len(sentences) > 20
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    copied = {}
    for name in tracked:
        path = ROOT / name
        if not name or path.suffix not in (".md", ".txt", ".world", ".py", ".json", ".jsonl"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found = [s for s in sentences if s in text]
        if found:
            copied[name] = found[:2]
    assert copied == {}
    prompt = _mcp_instructions("generated/tau2_retail", None,
                               ["--policy", str(TAU2_POLICY)])
    assert all(s in prompt for s in sentences)
