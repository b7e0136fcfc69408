"""Turn tau2-bench retail's ``tasks.json`` into WorldSpec tasks for ``examples/tau2/retail.world``.

tau2's data stays where it is and is never copied into the repository: a tau2-bench checkout
(``--tau2 PATH`` or ``$WORLDSPEC_TAU2_CHECKOUT``: its ``data/tau2/domains/retail/``) or the
peers folder (``--peers PATH`` or ``$WORLDSPEC_PEERS``, default ``../shared/peers`` from the
repository root: its ``tau2-retail/``); ``scripts/tau2_data.py`` decides which. The generated
file imports the world and names tau2's ``db.json`` by paths relative to itself, so it is
written outside the sources, by default to ``build/tau2/retail_tasks.world`` (ignored by git)::

    python scripts/tau2_tasks.py                          # or --tau2 ~/src/tau2-bench
    worldspec run build/tau2 --task retail_0 --solution
    worldspec tasks build/tau2    # 113 of 114 valid: retail_22, see below

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
  a failed call is atomic), which are kept as comments (which fail, and with what message, the
  peers folder's gold replays record; from a checkout, which has none, the conformant world's
  replay of the actions says it, and ``tests/test_tau2_tasks.py`` checks both give the same
  file); and, for a task with answer checks, a
  reference ``reply`` that names every item (written here: tau2 has no reference conversation);
- ``split`` from ``split_tasks.json``; ``tags tau2, retail``.

The reads tau2 leaves out. tau2's expected actions list the calls that change the database and
only some of the reads an agent makes first, so 58 of the 114 tasks, as listed, pass ids the
agent was never shown: an order or payment method id only ``get_user_details`` shows, an item
id only ``get_order_details`` or ``get_product_details`` shows, an address "in one of the
orders". Task validation rejects such a solution (discoverability, WS624, docs/language.md):
an agent could not reach it. So :class:`ReadPlanner` replays each task on the compiled world
and tau2's database, keeping what the agent was shown (``ShownText``, counted as validation
counts it), and before each expected action inserts the fewest reads that show every value
the action passes, each read's own arguments shown before it: the email or the name and zip
give the user id, the user's details the order ids, an order its item and product ids, a
product its variants' item ids. Each added read is marked in the file with
``# read added: shows <values>``. Reads change nothing, so the solution's final state, and
with it ``matches_solution()`` (tau2's DB reward), stays what tau2's gold trajectory leaves
(its ``final_db_hash``, which ``tests/test_tau2_tasks.py`` checks for every task).
``--as-listed`` writes tau2's expected actions alone. A value no read shows is named on
stderr and keeps its task's WS624: only retail_22's ``state: "NY"`` (the user says "New York";
none of their rows is in New York).

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from tau2_data import Tau2Retail, locate_tau2  # noqa: E402

from worldspec.compiler.model import ToolInfo, WorldModel  # noqa: E402
from worldspec.dsl.formatter import format_source, quote_string  # noqa: E402
from worldspec.runtime.episode import Episode  # noqa: E402
from worldspec.services.discoverability import (  # noqa: E402
    NamedValue,
    ShownText,
    normalised,
    shown_pieces,
    unseen_values,
)
from worldspec.services.loading import compile_worlds  # noqa: E402

WORLD_FILE = ROOT / "examples" / "tau2" / "retail.world"
WORLD_NAME = "Tau2Retail"
DEFAULT_OUT = ROOT / "build" / "tau2" / "retail_tasks.world"
DB_CHECK_DOC = "The database equals the one the expected actions leave (tau2's DB check)."


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


def splits(tau2: Tau2Retail) -> dict[str, str]:
    path = tau2.data / "split_tasks.json"
    if not path.is_file():
        return {}
    table = json.loads(path.read_text(encoding="utf-8"))
    return {task_id: split for split in ("train", "test") for task_id in table.get(split, [])}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What tau2's expected actions of one task do: the message of each that fails (by
    action id), and whether together they leave the database as it was."""

    failures: dict[str, str]
    changes_nothing: bool


def gold_outcome(tau2: Tau2Retail, task_id: str) -> Outcome | None:
    """The outcome tau2's own code recorded (the peers folder's gold replay), or None."""
    path = tau2.gold / f"{task_id}.json"
    if not path.is_file():
        return None
    gold = json.loads(path.read_text(encoding="utf-8"))
    return Outcome({step["action_id"]: step["content"] for step in gold["steps"] if step["error"]},
                   bool(gold["final_db_hash"] == gold["initial_db_hash"]))


def replayed_outcome(episode: Episode, db: dict[str, Any], task: Mapping[str, Any]) -> Outcome:
    """The outcome on the world, which answers every expected action as tau2 does (its text,
    error flag and database hash: tests/test_conformance_tau2.py): what a checkout without
    gold replays uses."""
    episode.reset(data=db)
    before = episode.state_hash()
    failures: dict[str, str] = {}
    for action in task["evaluation_criteria"]["actions"]:
        result = episode.call(action["name"], dict(action["arguments"]))
        if episode.failed(result):
            failures[action["action_id"]] = str(result)
    return Outcome(failures, episode.state_hash() == before)


# ------------------------------------------------------- the reads tau2's actions leave out

#: Each read tool of the world, with the calls of it an agent could make on tau2's database
#: (its JSON shape: each table a map keyed by row id), in order of preference when two reads
#: would show the same value: the user's details, then a product's, then an order's, then
#: the look-ups. ``get_item_details`` is left out: it needs the item id it would show.
CANDIDATE_READS: dict[str, Callable[[Mapping[str, Any]], Iterator[dict[str, Any]]]] = {
    "get_user_details": lambda db: ({"user_id": key} for key in db["users"]),
    "get_product_details": lambda db: ({"product_id": key} for key in db["products"]),
    "get_order_details": lambda db: ({"order_id": key} for key in db["orders"]),
    "find_user_id_by_email": lambda db: ({"email": user["email"]}
                                         for user in db["users"].values()),
    "find_user_id_by_name_zip": lambda db: (
        {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"],
         "zip": user["address"]["zip"]} for user in db["users"].values()),
    "list_all_product_types": lambda db: iter([{}]),
}

#: How many reads may lead to one value (the email gives the user id, the user's details an
#: order id, the order its product ids, the product its item ids).
MAX_CHAIN = 4


@dataclass(frozen=True, slots=True)
class Call:
    """One call of a reference solution: an expected action of tau2, or a read added before
    one (``shows``: the values it shows that a later call passes), or an expected action that
    fails in tau2 (``error``: tau2's message), kept as a comment."""

    name: str
    arguments: dict[str, Any]
    added: bool = False
    shows: tuple[str, ...] = ()
    error: str | None = None

    def source(self) -> str:
        return f"{self.name}(" + ", ".join(
            f"{arg}: {literal(value)}" for arg, value in self.arguments.items()) + ")"


@dataclass(frozen=True, slots=True)
class Unseen:
    """A value an expected action passes that no read shows: the task keeps its WS624."""

    task_id: str
    tool: str
    path: str
    value: str | int


class ReadPlanner:
    """Inserts, before each expected action, the reads a careful agent makes so that every
    value the action passes was shown first (WS624, ``worldspec.services.discoverability``).

    Every read of :data:`CANDIDATE_READS` is run once on tau2's database and indexed by the
    values its result shows. For a value the next action passes unseen, the planner picks
    the shortest chain of reads that shows it, each read's own arguments shown before it
    (an order id through the user's details, whose id the agent found by email); between
    chains of one length, a read of a row the action names (the order it changes) first,
    then the order of :data:`CANDIDATE_READS`. The chosen reads run in the episode, so what
    they show is what the agent would see at that point of the conversation.
    """

    def __init__(self, world: type[Episode], model: WorldModel, db: dict[str, Any]) -> None:
        self.world = world
        self.model = model
        self.db = db
        self.episode = world(data=db)
        self.row_keys = {str(key) for table in self.episode.tables.values()
                         for key in table.rows}
        self.definitions = self.episode.tools()
        self.reads: list[tuple[str, dict[str, Any]]] = []
        self.index: dict[str, list[int]] = {}
        for name, calls in CANDIDATE_READS.items():
            for arguments in calls(db):
                result = self.episode.call(name, dict(arguments))
                if self.episode.failed(result):
                    continue
                number = len(self.reads)
                self.reads.append((name, arguments))
                for value in {normalised(v) for v in shown_pieces(result)}:
                    self.index.setdefault(value, []).append(number)

    def tool(self, name: str) -> ToolInfo:
        return self.model.tools[name]

    def shown_at_start(self, texts: Iterable[str | None]) -> ShownText:
        """What the agent is shown before its first call, as validation counts it: the policy,
        the tool definitions, the instruction, persona and ``known`` information."""
        shown = ShownText([self.world.POLICY])
        shown.add_definitions(self.definitions)
        for text in texts:
            if text:
                shown.add_value(text)
        return shown

    def unseen(self, name: str, arguments: Mapping[str, Any],
               shown: ShownText) -> list[NamedValue]:
        tool = self.model.tools.get(name)
        if tool is None:
            return []
        return [v for param in tool.params
                for v in unseen_values(param, arguments, self.model, shown, self.row_keys)]

    def chain(self, value: str | int, shown: ShownText, names: frozenset[str]
              ) -> list[int] | None:
        """The shortest chain of reads (indices into ``self.reads``) that shows ``value``,
        or None; ``names``: the values the action passes (a read of one of them first)."""
        return _ChainSearch(self, shown, names).chain(value, MAX_CHAIN)

    def plan(self, task: Mapping[str, Any], texts: Iterable[str | None],
             failures: Mapping[str, str], add_reads: bool = True
             ) -> tuple[list[Call], list[Unseen]]:
        """The task's reference solution: its expected actions, with the reads added before
        each (unless ``add_reads`` is false), and the values no read shows."""
        self.episode.reset(data=self.db)
        shown = self.shown_at_start(texts)
        calls: list[Call] = []
        missing: list[Unseen] = []
        for action in task["evaluation_criteria"]["actions"]:
            name, arguments = action["name"], dict(action["arguments"])
            if action["action_id"] in failures:
                calls.append(Call(name, arguments, error=failures[action["action_id"]]))
                continue
            names = frozenset(str(v) for v in shown_pieces(arguments))
            tried: set[str] = set()
            while add_reads:
                unseen = [v for v in self.unseen(name, arguments, shown)
                          if normalised(str(v.value)) not in tried]
                if not unseen:
                    break
                tried.add(normalised(str(unseen[0].value)))
                chain = [self.reads[number] for number in
                         self.chain(unseen[0].value, shown, names) or ()]
                # what the chain is for: the action's values, and each read's own arguments
                pending = [str(v.value) for call in chain[1:]
                           for v in self.unseen(*call, shown)]
                pending += [str(v.value) for v in unseen]
                for read, read_arguments in chain:
                    shown.add_value(self.episode.call(read, dict(read_arguments)))
                    gained = tuple(dict.fromkeys(
                        v for v in pending if shown.shows(v, row_key=True)))
                    pending = [v for v in pending if v not in gained]
                    calls.append(Call(read, dict(read_arguments), added=True, shows=gained))
            for value in self.unseen(name, arguments, shown) if add_reads else ():
                missing.append(Unseen(task["id"], name, value.path, value.value))
            result = self.episode.call(name, dict(arguments))
            shown.add_value(result)
            calls.append(Call(name, arguments))
        return calls, missing


class _ChainSearch:
    """One search of :meth:`ReadPlanner.chain`, against one state of what was shown: what
    each read still needs and the best chain to each value are worked out once."""

    def __init__(self, planner: ReadPlanner, shown: ShownText, names: frozenset[str]) -> None:
        self.planner = planner
        self.shown = shown
        self.names = names
        self.order = list(CANDIDATE_READS)
        self.needs: dict[int, list[NamedValue]] = {}
        self.chains: dict[tuple[str, int], list[int] | None] = {}

    def chain(self, value: str | int, depth: int) -> list[int] | None:
        key = (normalised(str(value)), depth)
        if key not in self.chains:
            self.chains[key] = None  # a value on its own way there is not shown by it
            self.chains[key] = self._shortest(value, depth)
        return self.chains[key]

    def _needs(self, number: int) -> list[NamedValue]:
        if number not in self.needs:
            self.needs[number] = self.planner.unseen(*self.planner.reads[number], self.shown)
        return self.needs[number]

    def _shortest(self, value: str | int, depth: int) -> list[int] | None:
        best: tuple[tuple[int, int, int], list[int]] | None = None
        for number in self.planner.index.get(normalised(str(value)), ()):
            needs = self._needs(number)
            if any(normalised(str(v.value)) == normalised(str(value)) for v in needs):
                continue  # a read that needs the value it would show
            chain: list[int] = []
            for need in needs:
                found = self.chain(need.value, depth - 1) if depth > 1 else None
                if found is None:
                    break
                chain += [n for n in found if n not in chain]
            else:
                chain.append(number)
                name, arguments = self.planner.reads[number]
                named = bool(arguments) and all(str(v) in self.names for v in arguments.values())
                rank = (len(chain), 0 if named else 1, self.order.index(name))
                if best is None or rank < best[0]:
                    best = (rank, chain)
        return best[1] if best else None


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


def persona(task: Mapping[str, Any]) -> str:
    """The simulated user's behaviour: tau2's persona (when set) and task instructions."""
    scenario = task["user_scenario"]
    return " ".join(x for x in (scenario.get("persona"),
                                scenario["instructions"].get("task_instructions")) if x)


def shown_texts(task: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """What the task shows the agent before its first call: the instruction, the persona and
    the ``known`` information (never ``unknown``)."""
    instructions = task["user_scenario"]["instructions"]
    return instructions["reason_for_call"], persona(task), instructions.get("known_info")


def render_call(call: Call) -> list[str]:
    """A solution line: a call, an added read marked with what it shows, or a failing
    expected action as comments."""
    if call.error is not None:
        return [*comment(f"fails in tau2, so it changes nothing: {call.source()}", "    "),
                *comment(f"-> {call.error}", "    ")]
    if call.added:
        return [f"    {call.source()}  # read added: shows {', '.join(call.shows)}"]
    return [f"    {call.source()}"]


def render_task(task: dict[str, Any], db_path: str, split: str | None, calls: list[Call],
                restraint: bool = False) -> list[str]:
    instructions = task["user_scenario"]["instructions"]
    criteria = task["evaluation_criteria"]
    name = task_name(task["id"])
    doc = quote_string(f"tau2-bench retail task {task['id']}.")
    lines = [f"task {name} in {WORLD_NAME} {doc} {{",
             f"  given {quote_string(db_path)}",
             f"  instruction {quote_string(instructions['reason_for_call'])}"]
    if persona(task):
        lines.append(f"  persona {quote_string(persona(task))}")
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
    body = [line for call in calls for line in render_call(call)]
    if told:
        body.append(f"    reply {quote_string(reference_reply(told))}")
    lines += ["  solution {", *body, "  }"] if body else ["  solution {}"]
    lines.append("  tags tau2, retail")
    if split:
        lines.append(f"  split {split}")
    lines.append("}")
    return lines


def load_planner(tau2: Tau2Retail) -> ReadPlanner:
    """The planner on the compiled world and tau2's ``db.json``."""
    loaded = compile_worlds([WORLD_FILE])
    db = json.loads(tau2.db.read_text(encoding="utf-8"))
    return ReadPlanner(loaded.worlds[WORLD_NAME], loaded.result.model.worlds[WORLD_NAME], db)


def task_outcomes(tasks: Iterable[dict[str, Any]], tau2: Tau2Retail, planner: ReadPlanner
                  ) -> dict[str, Outcome]:
    """Each task's outcome by tau2 task id: the gold's where the peers folder has it, else
    the world's replay."""
    outcomes: dict[str, Outcome] = {}
    for task in tasks:
        recorded = gold_outcome(tau2, task["id"])
        outcomes[task["id"]] = recorded if recorded is not None else replayed_outcome(
            planner.episode, planner.db, task)
    return outcomes


def plan_solutions(tasks: Iterable[dict[str, Any]], tau2: Tau2Retail, add_reads: bool = True
                   ) -> tuple[dict[str, list[Call]], list[Unseen], dict[str, Outcome]]:
    """Each task's reference solution by tau2 task id, the values no read shows, and each
    task's outcome."""
    tasks = list(tasks)
    planner = load_planner(tau2)
    outcomes = task_outcomes(tasks, tau2, planner)
    solutions: dict[str, list[Call]] = {}
    missing: list[Unseen] = []
    for task in tasks:
        calls, unseen = planner.plan(task, shown_texts(task), outcomes[task["id"]].failures,
                                     add_reads)
        solutions[task["id"]] = calls
        missing += unseen
    return solutions, missing, outcomes


def render(tasks: list[dict[str, Any]], out: Path, tau2: Tau2Retail,
           solutions: Mapping[str, list[Call]], outcomes: Mapping[str, Outcome]) -> str:
    """The whole tasks file for ``out``, with paths relative to ``out``'s folder."""
    base = out.parent.resolve()
    world = Path(os.path.relpath(WORLD_FILE, base)).as_posix()
    db = Path(os.path.relpath(tau2.db, base)).as_posix()
    split_of = splits(tau2)
    lines = ["# tau2-bench retail tasks for examples/tau2/retail.world, made by",
             "# scripts/tau2_tasks.py from tau2-bench's retail data (tasks.json,",
             "# split_tasks.json).",
             "# Do not edit: run the script again.", "",
             f"import {quote_string(world)}"]
    for task in tasks:
        lines.append("")
        lines += render_task(task, db, split_of.get(task["id"]), solutions[task["id"]],
                             outcomes[task["id"]].changes_nothing)
    text = "\n".join(lines) + "\n"
    return format_source(text, out.name) or text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--tau2", type=Path, default=None, metavar="CHECKOUT",
                        help="a tau2-bench checkout (its data/tau2/domains/retail/; default: "
                             "$WORLDSPEC_TAU2_CHECKOUT, else the peers folder)")
    source.add_argument("--peers", type=Path, default=None,
                        help="the peer folder holding tau2-retail/ (default: $WORLDSPEC_PEERS, "
                             "or ../shared/peers from the repository root)")
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT,
                        help="the tasks file to write (default: build/tau2/retail_tasks.world)")
    parser.add_argument("--as-listed", action="store_true",
                        help="keep tau2's expected actions as they are, without the reads "
                             "that show the agent the ids they pass (most tasks then fail "
                             "WS624)")
    args = parser.parse_args(argv)
    tau2 = locate_tau2(checkout=args.tau2, peers=args.peers)
    if not tau2.tasks.is_file() or not tau2.db.is_file():
        print(f"tau2_tasks: {tau2.missing()} (or pass --tau2 / --peers)", file=sys.stderr)
        return 2
    try:
        tasks = json.loads(tau2.tasks.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"tau2_tasks: cannot read {tau2.tasks}: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out
    try:
        solutions, missing, outcomes = plan_solutions(tasks, tau2, add_reads=not args.as_listed)
        out.parent.mkdir(parents=True, exist_ok=True)
        text = render(tasks, out, tau2, solutions, outcomes)
        out.write_text(text, encoding="utf-8")
    except (OSError, ValueError, KeyError) as exc:
        print(f"tau2_tasks: cannot write {out}: {exc}", file=sys.stderr)
        return 1
    added = sum(call.added for calls in solutions.values() for call in calls)
    print(f"wrote {len(tasks)} tasks from {tau2.origin} to {os.path.relpath(out)} "
          f"({added} reads added)")
    for value in missing:
        print(f"tau2_tasks: task {value.task_id}: no read shows {value.tool}()'s "
              f"{value.path}: {json.dumps(value.value)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
