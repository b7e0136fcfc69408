"""Turn tau2-bench retail's ``tasks.json`` into WorldSpec tasks for ``examples/tau2/retail.world``.

The peer material stays where it is (``$WORLDSPEC_PEERS/tau2-retail``, by default
``../shared/peers`` from the repository root) and is never copied into the repository: the
generated file imports the world and names tau2's ``db.json`` by paths relative to itself, so it
is written outside the sources, by default to ``build/tau2/retail_tasks.world`` (ignored by git)::

    python scripts/tau2_tasks.py
    worldspec run build/tau2 --task retail_0 --solution
    worldspec tasks build/tau2

One task per tau2 task, named ``retail_<id>``:

- ``given`` tau2's pristine ``db.json`` (no retail task has an ``initial_state``);
- ``instruction`` the user's reason for calling; ``persona`` their behaviour instructions (and
  tau2's persona when one is set); ``known`` / ``unknown`` as in tau2;
- ``reward all``: tau2's reward is the product of its components (DB match, each 0 or 1, times
  communicate, 1 only when every ``communicate_info`` item was told), so the task scores 1 only
  when every check holds and 0 otherwise, for any trajectory the same number as tau2's
  evaluator (the world's ``config`` says the same; the task says it too, so the file reads
  alone);
- one check, ``db``: ``matches_solution()``, which is tau2's DB reward: the final state must equal
  the state the expected actions leave;
- one answer check per item of tau2's ``communicate_info`` (``told_1``, ``told_2``...): some
  message of the agent holds the item, compared as tau2 does (lower case, commas dropped from the
  message): ``any r in replies: r.lower().replace(",", "").contains("...")``;
- ``solution`` the expected actions in order, except those that fail in tau2 (they change nothing:
  a failed call is atomic), which are kept as comments; and, for a task with answer checks, a
  reference ``reply`` that names every item (written here: tau2 has no reference conversation);
- ``split`` from ``split_tasks.json``; ``tags tau2, retail``.

- ``only changes nothing`` for the 11 tasks whose expected actions change nothing (the gold
  final database hash is the initial one): the right outcome is to leave the database as it is
  (the request breaks the policy, or needs no change), so doing nothing earns the DB reward, as in
  tau2, and any change zeroes it. Validation takes such a *restraint* task as it is (no WS614).

tau2's ``nl_assertions`` are judged by an LLM: they are neither state nor text a check can match,
so they stay comments (one restraint task, 105, has one; tau2 grades six others on the database
alone). Note that tau2's retail tasks list ``NL_ASSERTION`` (LLM-judged), not ``COMMUNICATE``, in
their ``reward_basis`` (112 of 114; two are ``["DB"]``): the port grades the
``communicate_info`` items instead, as tau2's ``CommunicateEvaluator`` does, so WorldSpec's
reward is tau2's evaluator's with reward basis DB + COMMUNICATE
(``tests/test_tau2_rewards.py`` checks it on recorded trajectories graded by tau2's own code).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldspec.dsl.formatter import format_source, quote_string  # noqa: E402

WORLD_FILE = ROOT / "examples" / "tau2" / "retail.world"
WORLD_NAME = "Tau2Retail"
DEFAULT_OUT = ROOT / "build" / "tau2" / "retail_tasks.world"
DB_CHECK_DOC = "The database equals the one the expected actions leave (tau2's DB check)."


def peers_dir() -> Path:
    """``$WORLDSPEC_PEERS`` (relative to the repository root), default ``../shared/peers``."""
    return (ROOT / os.environ.get("WORLDSPEC_PEERS", "../shared/peers")).resolve()


def task_name(task_id: str) -> str:
    return "retail_" + re.sub(r"[^0-9A-Za-z_]", "_", task_id)


def literal(value: Any) -> str:
    """A WorldSpec literal for a JSON value of a tool argument."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote_string(str(k))}: {literal(x)}"
                               for k, x in value.items()) + "}"
    raise ValueError(f"unsupported argument value {value!r}")


def comment(text: str, indent: str) -> list[str]:
    """``text`` as comment lines (one per line of the text)."""
    return [f"{indent}# {line}".rstrip() for line in str(text).splitlines() or [""]]


def splits(tau2: Path) -> dict[str, str]:
    path = tau2 / "split_tasks.json"
    if not path.is_file():
        return {}
    table = json.loads(path.read_text(encoding="utf-8"))
    return {task_id: split for split in ("train", "test") for task_id in table.get(split, [])}


def failed_actions(tau2: Path, task_id: str) -> dict[str, str]:
    """Action id -> tau2's error message, for the expected actions that fail (from the gold)."""
    path = tau2 / "gold" / f"{task_id}.json"
    if not path.is_file():
        return {}
    gold = json.loads(path.read_text(encoding="utf-8"))
    return {step["action_id"]: step["content"] for step in gold["steps"] if step["error"]}


def changes_nothing(tau2: Path, task_id: str) -> bool:
    """Whether the task's expected actions leave the database as it was (from the gold)."""
    path = tau2 / "gold" / f"{task_id}.json"
    if not path.is_file():
        return False
    gold = json.loads(path.read_text(encoding="utf-8"))
    return bool(gold["final_db_hash"] == gold["initial_db_hash"])


def answer_check(number: int, info: str) -> str:
    """The check for one ``communicate_info`` item: some message of the agent holds it, as tau2
    compares (both lower-cased, the commas of the message dropped, so "1,234.56" holds
    "1234.56")."""
    doc = quote_string(f"The agent tells the user {info} (tau2's communicate_info).")
    wanted = quote_string(info.lower())
    return (f"  check told_{number} {doc}: "
            f"any r in replies: r.lower().replace(\",\", \"\").contains({wanted})")


def reference_reply(told: list[str]) -> str:
    """A reference answer naming every item, so validation can show the answer checks pass."""
    return "Here is what you asked about: " + "; ".join(told) + "."


def render_task(task: dict[str, Any], db_path: str, split: str | None,
                failures: dict[str, str], restraint: bool = False) -> list[str]:
    scenario = task["user_scenario"]
    instructions = scenario["instructions"]
    criteria = task["evaluation_criteria"]
    name = task_name(task["id"])
    doc = quote_string(f"tau2-bench retail task {task['id']}.")
    lines = [f"task {name} in {WORLD_NAME} {doc} {{",
             f"  given {quote_string(db_path)}",
             f"  instruction {quote_string(instructions['reason_for_call'])}"]
    persona = " ".join(x for x in (scenario.get("persona"), instructions.get("task_instructions"))
                       if x)
    if persona:
        lines.append(f"  persona {quote_string(persona)}")
    for key, item in (("known_info", "known"), ("unknown_info", "unknown")):
        if instructions.get(key):
            lines.append(f"  {item} {quote_string(instructions[key])}")
    lines.append("  reward all")
    lines.append(f"  check db {quote_string(DB_CHECK_DOC)}: matches_solution()")
    told = [str(info) for info in criteria.get("communicate_info") or ()]
    for number, info in enumerate(told, 1):
        lines.append(answer_check(number, info))
    for assertion in criteria.get("nl_assertions") or ():
        lines += comment(f"not graded here (tau2 nl_assertion, judged by an LLM): {assertion}",
                         "  ")
    if restraint:
        lines.append("  only changes nothing")
    body: list[str] = []
    for action in criteria["actions"]:
        call = f"{action['name']}(" + ", ".join(
            f"{arg}: {literal(value)}" for arg, value in action["arguments"].items()) + ")"
        if action["action_id"] in failures:
            body += comment(f"fails in tau2, so it changes nothing: {call}", "    ")
            body += comment(f"-> {failures[action['action_id']]}", "    ")
        else:
            body.append(f"    {call}")
    if told:
        body.append(f"    reply {quote_string(reference_reply(told))}")
    lines += ["  solution {", *body, "  }"] if body else ["  solution {}"]
    lines.append("  tags tau2, retail")
    if split:
        lines.append(f"  split {split}")
    lines.append("}")
    return lines


def render(tasks: Iterable[dict[str, Any]], out: Path, tau2: Path) -> str:
    """The whole tasks file for ``out``, with paths relative to ``out``'s folder."""
    base = out.parent.resolve()
    world = Path(os.path.relpath(WORLD_FILE, base)).as_posix()
    db = Path(os.path.relpath(tau2 / "db.json", base)).as_posix()
    split_of = splits(tau2)
    lines = ["# tau2-bench retail tasks for examples/tau2/retail.world, made by",
             "# scripts/tau2_tasks.py from the peer material (tasks.json, split_tasks.json,",
             "# gold/).",
             "# Do not edit: run the script again.", "",
             f"import {quote_string(world)}"]
    for task in tasks:
        lines.append("")
        lines += render_task(task, db, split_of.get(task["id"]),
                             failed_actions(tau2, task["id"]),
                             changes_nothing(tau2, task["id"]))
    text = "\n".join(lines) + "\n"
    return format_source(text, out.name) or text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=Path, default=None,
                        help="the peer folder holding tau2-retail/ (default: $WORLDSPEC_PEERS, "
                             "or ../shared/peers from the repository root)")
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT,
                        help="the tasks file to write (default: build/tau2/retail_tasks.world)")
    args = parser.parse_args(argv)
    tau2 = (args.peers.resolve() if args.peers else peers_dir()) / "tau2-retail"
    source = tau2 / "tasks.json"
    if not source.is_file():
        print(f"tau2_tasks: {source} not found (set WORLDSPEC_PEERS or pass --peers)",
              file=sys.stderr)
        return 2
    try:
        tasks = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"tau2_tasks: cannot read {source}: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        text = render(tasks, out, tau2)
        out.write_text(text, encoding="utf-8")
    except (OSError, ValueError, KeyError) as exc:
        print(f"tau2_tasks: cannot write {out}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {len(tasks)} tasks to {os.path.relpath(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
