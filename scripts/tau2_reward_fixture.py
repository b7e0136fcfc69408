"""Record τ²-bench's own verdicts on a few scripted retail trajectories, for
``tests/test_tau2_rewards.py``.

The trajectories are ours (written here: user messages, assistant text, assistant tool calls
with their arguments); their tool results and their rewards come from τ²-bench's own code,
which this script imports from a checkout given on the command line and runs on the peer
material (``$WORLDSPEC_PEERS/tau2-retail``: db.json and tasks.json, identical to τ²'s files).
Nothing of τ² is copied: the output holds the OpenAI-style messages and, per trajectory, τ²'s
DB reward, communicate reward and reward, with the τ² version and commit used.

Each trajectory is run through τ²'s retail ``Environment`` (its tool results become the tool
messages), then graded by ``evaluate_simulation(..., EvaluationType.ALL)``, which multiplies
the components of the task's ``reward_basis``. τ²'s retail tasks list ``NL_ASSERTION``
(LLM-judged) in their basis, which the WorldSpec port does not grade: it grades the
``communicate_info`` items, as τ²'s ``CommunicateEvaluator`` does, so the basis used here is
``["DB", "COMMUNICATE"]`` (``["DB"]`` for the two DB-only tasks). Run it with a Python where
τ² is installed (``pip install --ignore-requires-python -e TAU2`` works on 3.11 for this)::

    python scripts/tau2_reward_fixture.py --tau2 /path/to/tau2-bench --commit <sha>

This script is not imported by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "tau2_trajectories.json"
PEER_FILES = ("db.json", "tasks.json", "split_tasks.json", "policy.md")

#: a scripted turn: ("user", text), ("assistant", text) or ("call", tool, arguments)
Turn = tuple[Any, ...]

DAIKI = [
    ("user", "Hi. My order total is over $1100 but my card only has $950 left. Can you split "
             "the payment with another card?"),
    ("assistant", "I can help. Could you give me your email address so I can find your "
                  "account?"),
    ("user", "daikisanchez1479@example.com"),
    ("call", "find_user_id_by_email", {"email": "daikisanchez1479@example.com"}),
    ("call", "get_user_details", {"user_id": "daiki_sanchez_3253"}),
    ("call", "get_order_details", {"order_id": "#W9348897"}),
    ("assistant", "I'm sorry, a payment cannot be split between two cards. What else can I "
                  "do for you?"),
    ("user", "What's the most expensive item and its price? Can I cancel just that one?"),
    ("call", "calculate", {"expression": "466.75 + 288.82 + 135.24 + 193.38 + 46.66"}),
    ("assistant", "The most expensive item in order #W9348897 is the camera, at $481.50. A "
                  "single item of a pending order cannot be cancelled on its own, only the "
                  "whole order."),
    ("user", "Then cancel the whole order so I can order again."),
]


def daiki(reason: str) -> list[Turn]:
    """Task 38: the agent tells both facts and cancels the order with ``reason``."""
    return [*DAIKI,
            ("assistant", f"To confirm: cancel order #W9348897 with the reason '{reason}'. "
                          "Shall I go ahead?"),
            ("user", "Yes."),
            ("call", "cancel_pending_order", {"order_id": "#W9348897", "reason": reason}),
            ("assistant", "Order #W9348897 is cancelled; the refund goes back to your "
                          "original payment method.")]


def chen(facts: Sequence[str]) -> list[Turn]:
    """Task 62: a read-only question about a speaker; the agent says ``facts``."""
    return [
        ("user", "Hi, I'm Chen Johnson from Houston, 77004. I'm thinking of buying another "
                 "Bluetooth speaker like one I ordered. How much was it, and what's the "
                 "battery life?"),
        ("call", "find_user_id_by_name_zip",
         {"first_name": "Chen", "last_name": "Johnson", "zip": "77004"}),
        ("call", "get_user_details", {"user_id": "chen_johnson_4204"}),
        ("call", "get_order_details", {"order_id": "#W5797164"}),
        ("call", "get_order_details", {"order_id": "#W5061109"}),
        ("call", "get_product_details", {"product_id": "4768869376"}),
        *[("assistant", fact) for fact in facts],
    ]


def noah_address() -> list[Turn]:
    """Task 33 (reward basis DB only): change the user's default address."""
    return [
        ("user", "Hey, Noah Patel here, zip 10108. I moved: please change my default address "
                 "to 517 Lakeview Drive, Suite 183, Seattle, WA 98195, USA."),
        ("call", "find_user_id_by_name_zip",
         {"first_name": "Noah", "last_name": "Patel", "zip": "10108"}),
        ("call", "get_user_details", {"user_id": "noah_patel_6952"}),
        ("assistant", "I'll set your default address to 517 Lakeview Drive, Suite 183, Seattle, "
                      "WA 98195, USA. Confirm?"),
        ("user", "Yes please."),
        ("call", "modify_user_address",
         {"user_id": "noah_patel_6952", "address1": "517 Lakeview Drive",
          "address2": "Suite 183", "city": "Seattle", "country": "USA", "state": "WA",
          "zip": "98195"}),
        ("assistant", "Done: your default address is now 517 Lakeview Drive, Suite 183, "
                      "Seattle, WA 98195."),
    ]


def noah_order_address() -> list[Turn]:
    """Task 34 (DB only): a call fails (a mistyped order id) and the agent recovers."""
    new = {"address1": "224 Elm Street", "address2": "Suite 491", "city": "New York",
           "country": "USA", "state": "NY", "zip": "10108"}
    return [
        ("user", "Hi, Noah Patel, 10108. My pending order should ship to 224 Elm Street, "
                 "Suite 491, New York, NY 10108."),
        ("call", "find_user_id_by_name_zip",
         {"first_name": "Noah", "last_name": "Patel", "zip": "10108"}),
        ("call", "get_user_details", {"user_id": "noah_patel_6952"}),
        ("call", "get_order_details", {"order_id": "#W6111398"}),
        ("call", "get_order_details", {"order_id": "#W7043598"}),
        ("call", "modify_pending_order_address", {"order_id": "#W1845042", **new}),
        ("assistant", "Sorry, I mistyped the order id. Let me look at your third order."),
        ("call", "get_order_details", {"order_id": "#W1845024"}),
        ("assistant", "Order #W1845024 is pending. I'll change its address to 224 Elm Street, "
                      "Suite 491, New York, NY 10108. Confirm?"),
        ("user", "Yes."),
        ("call", "modify_pending_order_address", {"order_id": "#W1845024", **new}),
        ("assistant", "The shipping address of order #W1845024 is updated."),
    ]


#: name -> (τ² task id, turns, what it shows)
TRAJECTORIES: dict[str, tuple[str, list[Turn], str]] = {
    "38_wrong_reason": ("38", daiki("ordered by mistake"),
                        "both facts told, the order cancelled with the wrong reason: the DB "
                        "does not match"),
    "38_right": ("38", daiki("no longer needed"), "both facts told, the right cancellation"),
    "62_fact_missing": ("62", chen(["The speaker you ordered cost $302.67."]),
                        "nothing to change, so the DB matches; the battery life is not told"),
    "62_both_facts": ("62", chen(["The speaker you ordered cost $302,67 — sorry, $302.67.",
                                  "Its battery lasts 20 hours."]),
                      "both facts told, in two messages"),
    "33_db_only": ("33", noah_address(), "a DB-only task (reward basis DB) done right"),
    "34_failed_call": ("34", noah_order_address(),
                       "a failed call in the middle (unknown order id), then the right change"),
}


def _stage_data(peers: Path) -> Path:
    """A τ² data folder holding the peer files (τ²'s own, byte for byte)."""
    data = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    retail = data / "tau2" / "domains" / "retail"
    retail.mkdir(parents=True)
    for name in PEER_FILES:
        shutil.copyfile(peers / "tau2-retail" / name, retail / name)
    return data


def record(tau2_tasks: dict[str, Any]) -> list[dict[str, Any]]:
    """Run each trajectory through τ²'s environment and evaluator."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.data_model.tasks import RewardType, Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    out = []
    for name, (task_id, turns, about) in TRAJECTORIES.items():
        env = registry.get_env_constructor("retail")()
        messages: list[Any] = []
        openai: list[dict[str, Any]] = []
        for number, turn in enumerate(turns):
            if turn[0] == "user":
                messages.append(UserMessage(role="user", content=turn[1]))
                openai.append({"role": "user", "content": turn[1]})
            elif turn[0] == "assistant":
                messages.append(AssistantMessage(role="assistant", content=turn[1]))
                openai.append({"role": "assistant", "content": turn[1]})
            else:
                call = ToolCall(id=f"call_{number}", name=turn[1], arguments=turn[2])
                messages.append(AssistantMessage(role="assistant", content=None,
                                                 tool_calls=[call]))
                result = env.get_response(call)
                messages.append(result)
                openai.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": call.id, "type": "function",
                     "function": {"name": call.name,
                                  "arguments": json.dumps(call.arguments)}}]})
                openai.append({"role": "tool", "tool_call_id": call.id,
                               "content": result.content, "error": result.error})
        raw = dict(tau2_tasks[task_id])
        criteria = dict(raw["evaluation_criteria"])
        basis = ["DB"] if criteria["reward_basis"] == ["DB"] else ["DB", "COMMUNICATE"]
        criteria["reward_basis"] = basis
        task = Task.model_validate({**raw, "evaluation_criteria": criteria})
        run = SimulationRun(id=name, task_id=task_id, timestamp="", start_time="", end_time="",
                            duration=0.0, termination_reason=TerminationReason.AGENT_STOP,
                            messages=messages)
        info = evaluate_simulation(run, task, EvaluationType.ALL, solo_mode=False,
                                   domain="retail")
        breakdown = info.reward_breakdown or {}
        out.append({
            "name": name, "task": task_id, "about": about, "reward_basis": basis,
            "messages": openai,
            "tau2": {"db": breakdown.get(RewardType.DB),
                     "communicate": breakdown.get(RewardType.COMMUNICATE),
                     "reward": info.reward},
        })
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tau2", type=Path, required=True,
                        help="a checkout of tau2-bench (its src/ is imported)")
    parser.add_argument("--commit", default="", help="the tau2-bench commit of the checkout")
    parser.add_argument("--peers", type=Path, default=None,
                        help="the peer folder holding tau2-retail/ (default: $WORLDSPEC_PEERS, "
                             "else ../shared/peers from the repository root)")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    peers = args.peers or (ROOT / os.environ.get("WORLDSPEC_PEERS", "../shared/peers")).resolve()
    if not (peers / "tau2-retail" / "tasks.json").is_file():
        print(f"error: no tau2-retail/tasks.json under {peers}", file=sys.stderr)
        return 2
    os.environ["TAU2_DATA_DIR"] = str(_stage_data(peers))
    sys.path.insert(0, str(args.tau2 / "src"))
    from importlib.metadata import version

    tasks = {t["id"]: t for t in json.loads((peers / "tau2-retail" / "tasks.json").read_text(
        encoding="utf-8"))}
    fixture = {
        "about": "Scripted τ²-bench retail trajectories (ours) with τ²'s own verdicts, made by "
                 "scripts/tau2_reward_fixture.py: tool results from τ²'s retail environment, "
                 "rewards from τ²'s evaluate_simulation (EvaluationType.ALL) with reward basis "
                 "DB + COMMUNICATE (DB alone for DB-only tasks).",
        "tau2": {"version": version("tau2"), "commit": args.commit},
        "trajectories": record(tasks),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
    for t in fixture["trajectories"]:
        print(f"{t['name']}: tau2 db={t['tau2']['db']} communicate={t['tau2']['communicate']} "
              f"reward={t['tau2']['reward']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
