"""``worldspec diff``: one case per rule, formatting-only edits, impact, git, output formats.

The rule cases edit one small world (``tests/diff/base.world``): each row names
the rule it must trigger, the coordinate it must report and the text replaced
to turn the old spec into the new one (``reverse`` rows turn the new into the
old). A row lists every rule the edit reports, so an edit that also triggers
something unexpected fails. Every rule of the table has a row.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.example_specs import example_specs
from worldspec.cli.main import SUBCOMMANDS, main
from worldspec.compiler import types as t
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.formatter import format_source
from worldspec.dsl.parser import parse_module
from worldspec.services.diff import RULES, Change, Level
from worldspec.services.diff.compare import compare_models
from worldspec.services.diff.relations import Relation, relate_conditions, relate_types
from worldspec.services.diff.render import MARKDOWN_MARKER
from worldspec.services.diff.sources import load_side

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "tests" / "diff" / "base.world").read_text(encoding="utf-8")
SHOP = ROOT / "examples" / "shop"
EXAMPLES = ROOT / "examples"

OTHER_WORLD = 'world Other "Another world."\n\nstate { hits: int = 0 }\n'
PING = 'tool ping() -> str "Answer pong." {\n  return "pong"\n}\n\n'
NEW_TASK = ('task count_them in Shop {\n  instruction "Count the customers."\n'
            '  check none: len(customers) == 0\n  solution { count_customers() }\n}\n')


@dataclass(frozen=True)
class Case:
    """Replace ``before`` by ``after`` in the base spec; expect ``rules`` at ``coordinate``."""

    rule: str
    coordinate: str
    before: str = ""
    after: str = ""
    reverse: bool = False
    extra_old: str | None = None
    extra_new: str | None = None
    also: tuple[str, ...] = ()

    def specs(self) -> tuple[str, str]:
        edited = BASE
        if self.before:
            assert BASE.count(self.before) == 1, f"{self.before!r} is not unique in the base"
            edited = BASE.replace(self.before, self.after)
        return (edited, BASE) if self.reverse else (BASE, edited)


RENAME_PARAMS = ('  customer: Customer "The customer id." else f"No customer {customer}.",\n'
                 '  name: str(1..80) "The new name.",\n  note: str = "" "A note for the log.",\n')
REQUIRES = ('  require customer.status == open else "The customer is closed."\n'
            '  require len(name) >= 1 else "The name is empty."\n')
CLOSE_TOOL = BASE[BASE.index("tool close_account"):BASE.index("tool shout_name")]
CLOSE_TASK = BASE[BASE.index("task close_ann"):]

CASES = [
    # worlds and config
    Case("world-removed", "world Other", extra_old=OTHER_WORLD),
    Case("world-added", "world Other", extra_new=OTHER_WORLD),
    Case("world-description-changed", "world Shop", '"A tiny shop."', '"A small shop."'),
    Case("result-convention-changed", "config results", "results: envscaler", "results: bfcl"),
    Case("clock-changed", "config tick", "tick: 0", "tick: 60"),
    Case("seed-changed", "config seed", "seed: 1 }", "seed: 2 }"),
    Case("failure-texts-changed", "config arguments / results", "seed: 1 }",
         "seed: 1  arguments: python }"),
    Case("failure-texts-changed", "config arguments / results", "seed: 1 }",
         "seed: 1  unknown_tool: \"No tool {name}.\" }"),
    Case("const-changed", "const LIMIT", 'world Shop "A tiny shop."\n',
         'world Shop "A tiny shop."\n\nconst LIMIT = 3\n'),
    Case("policy-changed", "world Shop / policy", 'world Shop "A tiny shop."\n',
         'world Shop "A tiny shop."\n\npolicy "Confirm before closing an account."\n'),
    # tools
    Case("tool-removed", "tool close_account", CLOSE_TOOL + "tool shout_name",
         "tool shout_name"),
    Case("tool-added", "tool ping", "task rename_ann", PING + "task rename_ann"),
    Case("tool-description-changed", "tool rename", '"Rename a customer."',
         '"Give a customer a new name."'),
    Case("result-type-changed", "tool count_customers / result",
         'int "Count the customers." {\n  return len(customers)',
         'str "Count the customers." {\n  return str(len(customers))',
         also=("tool-effects-changed",)),
    Case("result-type-widened", "tool count_customers / result", "-> int ", "-> int? "),
    Case("result-type-narrowed", "tool count_customers / result", "-> int ", "-> int? ",
         reverse=True),
    # parameters
    Case("param-removed", "tool rename / param note", '  note: str = "" "A note for the log.",\n',
         ""),
    Case("param-added-required", "tool rename / param reason", '"A note for the log.",\n',
         '"A note for the log.",\n  reason: str "Why.",\n'),
    Case("param-added-optional", "tool rename / param reason", '"A note for the log.",\n',
         '"A note for the log.",\n  reason: str? "Why.",\n'),
    Case("param-now-required", "tool rename / param note", 'note: str = "" "A note',
         'note: str "A note'),
    Case("param-now-optional", "tool rename / param note", 'note: str = "" "A note',
         'note: str "A note', reverse=True),
    Case("param-type-narrowed", "tool rename / param name", 'name: str(1..80) "The new',
         'name: str(1..40) "The new'),
    Case("param-type-changed", "tool rename / param note", 'note: str = "" "A',
         'note: int = 0 "A', also=("param-default-changed",)),
    Case("param-type-widened", "tool rename / param name", 'name: str(1..80) "The new',
         'name: str(1..200) "The new'),
    Case("param-default-changed", "tool rename / param note", 'note: str = "" "A',
         'note: str = "none" "A'),
    Case("param-description-changed", "tool rename / param name", '"The new name."',
         '"The name to use."'),
    Case("param-order-changed", "tool rename / params", RENAME_PARAMS,
         '  name: str(1..80) "The new name.",\n'
         '  customer: Customer "The customer id." else f"No customer {customer}.",\n'
         '  note: str = "" "A note for the log.",\n'),
    # behaviour
    Case("precondition-added", 'tool rename / require name != "x"', REQUIRES,
         REQUIRES + '  require name != "x" else "Bad name."\n'),
    Case("precondition-removed", "tool rename / require len(name) >= 1",
         '  require len(name) >= 1 else "The name is empty."\n', ""),
    Case("precondition-tightened", "tool rename / require len(name) >= 2",
         "len(name) >= 1", "len(name) >= 2"),
    Case("precondition-loosened", "tool rename / require len(name) >= 0",
         "len(name) >= 1", "len(name) >= 0"),
    Case("precondition-changed", "tool rename / require customer.status != closed",
         'customer.status == open else "The customer is closed."',
         'customer.status != closed else "The customer is closed."'),
    Case("precondition-reordered", "tool rename / require order", REQUIRES,
         "\n".join(reversed(REQUIRES.rstrip("\n").split("\n"))) + "\n"),
    Case("error-message-changed", "tool rename / require customer.status == open",
         '"The customer is closed."', '"This customer is closed."'),
    Case("tool-effects-changed", "tool rename / body", "customer.name = name",
         "customer.name = name.strip()"),
    Case("helper-changed", "helper shout", "fn shout(text: str) -> str \"Upper case.\" {\n"
         "  return text.upper()", "fn shout(text: str) -> str \"Upper case.\" {\n"
         "  return text.lower()"),
    Case("helper-added", "helper whisper", "invariant names_short",
         'fn whisper(text: str) -> str {\n  return text.lower()\n}\n\ninvariant names_short'),
    Case("helper-removed", "helper initials",
         BASE[BASE.index("fn initials"):BASE.index("invariant names_short")], ""),
    Case("invariant-added", "invariant has_name", "tool rename(",
         'invariant has_name "Names are not empty.":\n  all c in customers: len(c.name) > 0\n\n'
         "tool rename("),
    Case("invariant-removed", "invariant names_short",
         'invariant names_short "Names are short.":\n  all c in customers: len(c.name) <= 80\n',
         ""),
    Case("invariant-tightened", "invariant names_short", "len(c.name) <= 80",
         "len(c.name) <= 60"),
    Case("invariant-loosened", "invariant names_short", "len(c.name) <= 80",
         "len(c.name) <= 100"),
    Case("invariant-changed", "invariant names_short", "len(c.name) <= 80", 'c.name != ""'),
    # state schema
    Case("type-removed", "enum Color", "enum Color { red, green }\n", ""),
    Case("type-added", "enum Size", "enum Color", "enum Size { small, large }\n\nenum Color"),
    Case("type-kind-changed", "entity Note", "record Note { text: str }",
         "entity Note { key text: str }"),
    Case("key-changed", "entity Tag / key", "entity Tag { key id: str",
         "entity Tag { key id: int"),
    Case("field-removed", "entity Customer / field age", "  age: int(0..150) = 30\n", ""),
    Case("field-added-required", "entity Customer / field email", "  status: Status = open\n",
         "  status: Status = open\n  email: str\n"),
    Case("field-added-optional", "entity Customer / field email", "  status: Status = open\n",
         "  status: Status = open\n  email: str? = none\n"),
    Case("field-now-required", "entity Customer / field age", "age: int(0..150) = 30",
         "age: int(0..150)"),
    Case("field-now-optional", "entity Customer / field age", "age: int(0..150) = 30",
         "age: int(0..150)", reverse=True),
    Case("field-type-narrowed", "entity Customer / field age", "age: int(0..150)",
         "age: int(0..120)"),
    Case("field-type-changed", "record Address / field zip", "zip: str matching /^[0-9]{5}$/",
         "zip: str matching /^[0-9]{5}(-[0-9]{4})?$/"),
    Case("field-type-widened", "entity Customer / field age", "age: int(0..150)",
         "age: int(0..200)"),
    Case("field-default-changed", "entity Customer / field age", "= 30", "= 40"),
    Case("enum-member-added", "enum Status / member paused", "enum Status { open, closed",
         "enum Status { open, paused, closed"),
    Case("enum-member-removed", "enum Color / member green", "{ red, green }", "{ red }"),
    Case("enum-member-value-changed", "enum Status / member closed", 'closed = "closed"',
         'closed = "shut"'),
    Case("union-variant-added", "union Payment / variant cash", "voucher: Voucher }",
         "voucher: Voucher, cash: Cash }"),
    Case("union-variant-removed", "union Payment / variant voucher", ", voucher: Voucher }",
         " }"),
    Case("union-variant-changed", "union Payment / variant voucher", "voucher: Voucher }",
         "voucher: Cash }"),
    Case("union-tag-changed", "union Payment / tag", "by source", "by kind"),
    Case("state-removed", "state greeting", '  greeting: str = "hi"\n', ""),
    Case("state-added", "state visits", '  greeting: str = "hi"\n',
         '  greeting: str = "hi"\n  visits: int = 0\n'),
    Case("state-type-narrowed", "state greeting", 'greeting: str = "hi"',
         'greeting: str(1..10) = "hi"'),
    Case("state-type-changed", "state greeting", 'greeting: str = "hi"', "greeting: int = 0",
         also=("state-default-changed",)),
    Case("state-type-widened", "state greeting", 'greeting: str = "hi"',
         'greeting: str? = "hi"'),
    Case("state-default-changed", "state greeting", '= "hi"', '= "hello"'),
    Case("sequence-format-changed", "state ids", '"C{:03d}"', '"C{:04d}"'),
    Case("doc-changed", "entity Customer / field name", '"The full name."', '"The name."'),
    # tasks
    Case("task-removed", "task close_ann", CLOSE_TASK, ""),
    Case("task-added", "task count_them", CLOSE_TASK, CLOSE_TASK + "\n" + NEW_TASK),
    # a task still declared, but for a world that does not exist: not "removed"
    Case("task-invalid", "task close_ann", "task close_ann in Shop", "task close_ann in Shoop"),
    Case("task-instruction-changed", "task rename_ann / instruction",
         '"Rename customer C001 to Anna."', '"Please rename customer C001 to Anna."'),
    Case("task-user-changed", "task rename_ann / persona", '"Polite."', '"Impatient."'),
    Case("task-data-changed", "task rename_ann / given customers",
         'given { customers: [{id: "C001", name: "Ann"}] }\n  instruction "Rename',
         'given { customers: [{id: "C001", name: "Annie"}] }\n  instruction "Rename'),
    Case("task-settings-changed", "task rename_ann / split", "split train", "split test"),
    Case("task-tags-changed", "task rename_ann / tags", "tags rename", "tags rename, people"),
    Case("check-added", "task rename_ann / check has_age", "  only changes customers.name",
         '  check has_age: customers["C001"].age > 0\n  only changes customers.name'),
    Case("check-removed", "task rename_ann / check still_open",
         '  check still_open: customers["C001"].status == open\n', ""),
    Case("check-tightened", "task rename_ann / check still_open",
         'still_open: customers["C001"].status == open',
         'still_open: customers["C001"].status == open and customers["C001"].age > 0'),
    Case("check-loosened", "task rename_ann / check still_open",
         'still_open: customers["C001"].status == open',
         'still_open: customers["C001"].status == open and customers["C001"].age > 0',
         reverse=True),
    Case("check-changed", "task rename_ann / check renamed", '.name == "Anna"',
         '.name.startswith("Ann")'),
    Case("check-weight-changed", "task rename_ann / check renamed", "weight 2", "weight 3"),
    Case("frame-tightened", "task rename_ann / frame", "only changes customers.name",
         "only changes nothing"),
    Case("frame-loosened", "task rename_ann / frame", "only changes customers.name",
         "only changes customers"),
    Case("frame-changed", "task rename_ann / frame", "only changes customers.name",
         "only changes customers.status"),
    Case("solution-changed", "task rename_ann / solution",
         'solution { rename(customer: "C001", name: "Anna") }',
         'solution { rename(customer: "C001", name: "Anna", note: "asked") }'),
]


def _write(folder: Path, main_text: str, extra: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shop.world").write_text(main_text, encoding="utf-8")
    if extra is not None:
        (folder / "other.world").write_text(extra, encoding="utf-8")
    return folder


def diff_texts(tmp_path: Path, old: str, new: str, extra_old: str | None = None,
               extra_new: str | None = None) -> list[Change]:
    """The changes from ``old`` to ``new``, both checked without errors outside tasks."""
    old_side = load_side([_write(tmp_path / "old", old, extra_old)], "old")
    new_side = load_side([_write(tmp_path / "new", new, extra_new)], "new")
    assert not old_side.fatal, [d.message for d in old_side.fatal]
    assert not new_side.fatal, [d.message for d in new_side.fatal]
    return compare_models(old_side.result, new_side.result)


def test_the_base_world_is_clean(tmp_path: Path) -> None:
    side = load_side([_write(tmp_path, BASE, None)], "base")
    assert side.result.ok and not side.task_errors


def test_every_rule_has_a_case() -> None:
    assert {c.rule for c in CASES} == set(RULES)


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule(case: Case, tmp_path: Path) -> None:
    old, new = case.specs()
    changes = diff_texts(tmp_path, old, new, case.extra_old, case.extra_new)
    assert sorted(c.rule for c in changes) == sorted([case.rule, *case.also])
    [change] = [c for c in changes if c.rule == case.rule]
    assert change.coordinate == case.coordinate
    row = RULES[case.rule]
    assert (change.level, change.area) == (row.level, row.area)
    assert change.world in ("Shop", "Other")
    assert change.span is not None
    assert re.fullmatch(r"[0-9a-f]{16}", change.fingerprint)


def test_spans_point_into_the_new_file(tmp_path: Path) -> None:
    changes = diff_texts(tmp_path, BASE, BASE.replace("len(name) >= 1", "len(name) >= 2"))
    [change] = changes
    assert change.span is not None and change.span.file.endswith("new/shop.world")
    line = BASE.splitlines()[change.span.line - 1]
    assert "len(name) >= 1" in line
    assert change.old == "len(name) >= 1" and change.new == "len(name) >= 2"


def test_fingerprints_survive_rewording(tmp_path: Path) -> None:
    first = diff_texts(tmp_path / "a", BASE, BASE.replace('"The customer is closed."',
                                                          '"This customer is closed."'))
    second = diff_texts(tmp_path / "b", BASE, BASE.replace('"The customer is closed."',
                                                           '"Closed customers cannot rename."'))
    assert [c.fingerprint for c in first] == [c.fingerprint for c in second]
    assert first[0].message == second[0].message
    other = diff_texts(tmp_path / "c", BASE, BASE.replace('"The name is empty."',
                                                          '"Give a name."'))
    assert other[0].fingerprint != first[0].fingerprint


# ------------------------------------------------------------ relations
@pytest.mark.parametrize(("old", "new", "expected"), [
    (t.INT, t.FLOAT, Relation.WIDER),
    (t.FLOAT, t.INT, Relation.NARROWER),
    (t.STR, t.Optional(t.STR), Relation.WIDER),
    (t.Optional(t.STR), t.STR, Relation.NARROWER),
    (t.STR, t.JSON, Relation.WIDER),
    (t.Prim("int", t.Refinement(0, 10)), t.Prim("int", t.Refinement(0, None)), Relation.WIDER),
    (t.Prim("int", t.Refinement(0, 10)), t.Prim("int", t.Refinement(5, 20)),
     Relation.DIFFERENT),
    (t.Prim("str", t.Refinement(pattern="a")), t.STR, Relation.WIDER),
    (t.ListOf(t.INT, t.Refinement(None, 5)), t.ListOf(t.INT, t.Refinement(None, 3)),
     Relation.NARROWER),
    (t.MapOf(t.STR, t.INT), t.MapOf(t.STR, t.FLOAT), Relation.WIDER),
    (t.Named("enum", "A"), t.Named("enum", "B"), Relation.DIFFERENT),
    (t.STR, t.INT, Relation.DIFFERENT),
])
def test_relate_types(old: t.Type, new: t.Type, expected: Relation) -> None:
    assert relate_types(old, new) is expected


def _condition(text: str) -> n.Expr:
    module = parse_module(f"invariant x: {text}\n", "<c>.world", DiagnosticSink()).module
    decl = module.decls[0]
    assert isinstance(decl, n.InvariantDecl)
    return decl.condition


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("a", "a and b", Relation.NARROWER),
    ("a and b", "a", Relation.WIDER),
    ("a", "a or b", Relation.WIDER),
    ("a or b or c", "a or c", Relation.NARROWER),
    ("x >= 1", "x >= 2", Relation.NARROWER),
    ("x >= 1", "x > 1", Relation.NARROWER),
    ("x < 5", "x <= 5", Relation.WIDER),
    ("1 <= x", "x >= 0", Relation.WIDER),
    ("a and x >= 1", "a and x >= 3", Relation.NARROWER),
    ("not (x >= 1)", "not (x >= 2)", Relation.WIDER),
    ("x == 1", "x == 2", Relation.DIFFERENT),
    ("x >= 1", "y >= 2", Relation.DIFFERENT),
])
def test_relate_conditions(old: str, new: str, expected: Relation) -> None:
    assert relate_conditions(_condition(old), _condition(new)) is expected


# ------------------------------------------------------ formatting-only edits
def _noise(text: str) -> str:
    """The same spec with comments everywhere and another indentation."""
    out = ["# a comment before everything"]
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("tool ", "entity ", "task ", "state ", "fn ")):
            out.append("# a comment before a declaration")
        out.append(("    " + stripped) if line.startswith("  ") else line)
        if line.strip() == "{":
            out.append("")
    return "\n".join(out) + "\n\n# a trailing comment\n"


def test_formatting_and_comments_are_not_changes(tmp_path: Path) -> None:
    formatted = format_source(BASE)
    assert formatted is not None
    assert diff_texts(tmp_path / "fmt", BASE, formatted) == []
    assert diff_texts(tmp_path / "noise", BASE, _noise(BASE)) == []


def test_formatting_the_examples_changes_nothing(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every example of the per-file sample (``tests/example_specs.py``), made noisy and
    formatted again, compares equal to itself (``make test`` runs ``fmt --check`` on the
    whole corpus)."""
    before, after = tmp_path / "before", tmp_path / "after"
    for folder in sorted({spec.parent for spec in example_specs()}):
        place = folder.relative_to(EXAMPLES)
        shutil.copytree(folder, before / place, dirs_exist_ok=True)
        shutil.copytree(folder, after / place, dirs_exist_ok=True)
    for spec in after.rglob("*.world"):
        noisy = _noise(spec.read_text(encoding="utf-8"))
        spec.write_text(format_source(noisy) or noisy, encoding="utf-8")
    code = main(["diff", str(before), str(after), "--no-impact", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["changes"] == [] and out["summary"]["total"] == 0


# ----------------------------------------------------------------- impact
def _shop_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "shop"
    shutil.copytree(SHOP, copy)
    return copy


def _edit(path: Path, before: str, after: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(before) == 1, before
    path.write_text(text.replace(before, after), encoding="utf-8")


def _record_solution(task: str, folder: Path, capsys: pytest.CaptureFixture[str],
                     name: str | None = None) -> Path:
    """Record the reference solution of ``task`` as a JSONL trajectory."""
    assert main(["run", str(SHOP), "--task", task, "--solution", "--format", "json"]) == 0
    calls = json.loads(capsys.readouterr().out)["calls"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{task}.jsonl")
    path.write_text("".join(json.dumps({"name": c["name"], "arguments": c["arguments"]}) + "\n"
                            for c in calls), encoding="utf-8")
    return path


def _diff_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["diff", *args, "--format", "json"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out)


def test_tightened_precondition_breaks_a_task_and_a_trajectory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _shop_copy(tmp_path)
    trajectories = tmp_path / "runs"
    _record_solution("cancel_and_reorder", trajectories, capsys)
    _record_solution("grey_sweater_swap", trajectories, capsys)
    _edit(new / "shop.world", 'require order.status == pending else f"Order {order.id} cannot '
          'be cancelled', 'require order.status == pending and order.customer.id != "C01" '
          'else f"Order {order.id} cannot be cancelled')
    code, report = _diff_json(capsys, str(SHOP), str(new), "--trajectories", str(trajectories),
                              "--fail-on", "breaking")
    assert code == 1
    [change] = report["changes"]
    assert change["rule"] == "precondition-tightened" and change["level"] == "breaking"
    assert change["coordinate"].startswith("tool cancel_order / require ")
    assert change["span"]["file"].endswith("shop/shop.world")
    assert change["impact"]["tasks"] == ["OnlineShop.cancel_and_reorder"]
    assert [Path(p).name for p in change["impact"]["trajectories"]] == [
        "cancel_and_reorder.jsonl"]
    impact = report["impact"]
    [task] = impact["tasks"]
    assert (task["task"], task["status"]) == ("cancel_and_reorder", "broken")
    assert task["problems"][0].startswith("WS610: solution call cancel_order() fails")
    by_task = {t["task"]: t for t in impact["trajectories"]}
    assert by_task["grey_sweater_swap"]["status"] == "unchanged"
    moved = by_task["cancel_and_reorder"]
    assert moved["status"] == "changed"
    assert moved["old_reward"] == 1.0 and moved["new_reward"] < 1.0
    assert moved["first_difference"]["tool"] == "cancel_order"
    assert moved["first_difference"]["new"].startswith("Error: ")
    assert {"check": "cancelled", "old": "passed", "new": "failed"} in moved["checks"]


def test_a_task_that_still_exists_but_has_errors_is_not_removed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trajectory of a task that is still declared but no longer checks is
    ``task-invalid``, not ``task-removed`` (its task is listed ``broken``)."""
    new = _shop_copy(tmp_path)
    runs = tmp_path / "runs"
    _record_solution("cancel_and_reorder", runs, capsys)
    _edit(new / "tasks.world", '.cancel_reason == CancelReason.ordered_by_mistake',
          '.cancel_reasn == CancelReason.ordered_by_mistake')
    code, report = _diff_json(capsys, str(SHOP), str(new), "--trajectories", str(runs))
    assert code == 0
    [task] = report["impact"]["tasks"]
    assert (task["task"], task["status"]) == ("cancel_and_reorder", "broken")
    [run] = report["impact"]["trajectories"]
    assert run["status"] == "task-invalid", run
    assert "declared on the new side but has errors there" in run["message"]
    assert main(["diff", str(SHOP), str(new), "--trajectories", str(runs),
                 "--fail-on", "dangerous"]) == 1
    assert "    task-invalid " in capsys.readouterr().out


def test_changed_message_changes_a_trajectory_not_the_tasks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _shop_copy(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "cancel_and_reorder.failed-attempt.jsonl").write_text(
        '{"name": "get_order_details", "arguments": {"order": "#W0000000"}}\n', encoding="utf-8")
    _edit(new / "shop.world", 'f"Order {order} not found. Order ids look like #W4817420."',
          'f"There is no order {order}."')
    code, report = _diff_json(capsys, str(SHOP), str(new), "--trajectories", str(runs),
                              "--fail-on", "breaking")
    assert code == 0  # a dangerous change and a changed trajectory are below 'breaking'
    [change] = report["changes"]
    assert change["rule"] == "error-message-changed" and change["level"] == "dangerous"
    impact = report["impact"]
    assert impact["tasks"] == []
    [run] = impact["trajectories"]
    assert run["status"] == "changed" and run["old_reward"] == run["new_reward"]
    assert run["first_difference"]["new"] == "Error: There is no order #W0000000."
    assert main(["diff", str(SHOP), str(new), "--trajectories", str(runs),
                 "--fail-on", "dangerous"]) == 1


def test_chat_transcripts_are_trajectories_named_by_their_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    plain = _record_solution("cancel_and_reorder", runs, capsys)
    calls = [json.loads(line) for line in plain.read_text(encoding="utf-8").splitlines()]
    plain.unlink()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Cancel my order."}]
    for number, call in enumerate(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{number}", "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{number}", "content": "..."})
    (runs / "cancel_and_reorder.gpt-run.json").write_text(json.dumps(messages),
                                                          encoding="utf-8")
    new = _shop_copy(tmp_path)
    _edit(new / "shop.world", "order.status = cancelled\n", "")
    code, report = _diff_json(capsys, str(SHOP), str(new), "--trajectories", str(runs))
    assert code == 0
    assert [c["rule"] for c in report["changes"]] == ["tool-effects-changed"]
    [run] = report["impact"]["trajectories"]
    assert (run["task"], run["status"]) == ("cancel_and_reorder", "changed")
    assert run["first_difference"]["tool"] == "cancel_order"
    assert run["old_reward"] == 1.0 and run["new_reward"] < 1.0
    [change] = report["changes"]
    assert change["impact"]["trajectories"] == [run["file"]]


def test_schema_change_rejects_old_data_even_when_the_data_moved_with_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _shop_copy(tmp_path)
    _edit(new / "shop.world", "  category: str\n}", "  category: str\n  brand: str\n}")
    seed = new / "data" / "seed.json"
    data = json.loads(seed.read_text(encoding="utf-8"))
    for product in data["products"]:
        product["brand"] = "Acme"
    seed.write_text(json.dumps(data), encoding="utf-8")
    code, report = _diff_json(capsys, str(SHOP), str(new))
    assert code == 0
    rules = {c["rule"] for c in report["changes"]}
    assert {"field-added-required", "task-data-changed"} <= rules
    impact = report["impact"]
    statuses = {t["status"] for t in impact["tasks"]}
    assert statuses == {"data"}
    assert any("brand" in p for t in impact["tasks"] for p in t["problems"])


def test_tasks_broken_by_the_schema_are_impact_not_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _shop_copy(tmp_path)
    _edit(new / "shop.world", "  category: str\n}", "  category: str\n  brand: str\n}")
    code, report = _diff_json(capsys, str(SHOP), str(new), "--fail-on", "breaking")
    assert code == 1
    impact = report["impact"]
    assert {t["status"] for t in impact["tasks"]} == {"broken"}
    assert all(any(p.startswith("WS6") for p in t["problems"]) for t in impact["tasks"])


def test_unreadable_and_unknown_trajectories_are_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "cancel_and_reorder.jsonl").write_text("not json\n", encoding="utf-8")
    (runs / "no_such_task.jsonl").write_text('{"name": "x"}\n', encoding="utf-8")
    (runs / "notes.txt").write_text("ignored", encoding="utf-8")
    code, report = _diff_json(capsys, str(SHOP), str(SHOP), "--trajectories", str(runs))
    assert code == 0
    impact = report["impact"]
    statuses = {t["task"]: t["status"] for t in impact["trajectories"]}
    assert statuses == {"cancel_and_reorder": "unreadable", "no_such_task": "unreadable"}


# ----------------------------------------------------------- output formats
def _two_sides(tmp_path: Path) -> tuple[Path, Path]:
    old = _write(tmp_path / "old", BASE, None)
    new = _write(tmp_path / "new", BASE.replace("len(name) >= 1", "len(name) >= 2")
                 .replace('"Rename a customer."', '"Give a customer a new name."')
                 .replace("task rename_ann", PING + "task rename_ann"), None)
    return old, new


def test_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _two_sides(tmp_path)
    assert main(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "3 changes: 1 breaking, 1 dangerous, 1 safe, 0 info" in out
    assert "BREAKING  precondition-tightened  tool rename / require len(name) >= 2" in out
    assert "- len(name) >= 1" in out and "+ len(name) >= 2" in out
    assert "tasks: every task validates as before" in out


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _two_sides(tmp_path)
    code, report = _diff_json(capsys, str(old), str(new))
    assert code == 0
    assert set(report) == {"old", "new", "summary", "changes", "impact"}
    changes = report["changes"]
    assert [c["level"] for c in changes] == ["breaking", "dangerous", "safe"]
    for change in changes:
        assert {"level", "rule", "area", "world", "coordinate", "message", "fingerprint",
                "old", "new", "span", "old_span", "impact"} <= set(change)
        assert set(change["impact"]) == {"tasks", "trajectories"}


def test_markdown_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _two_sides(tmp_path)
    assert main(["diff", str(old), str(new), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(MARKDOWN_MARKER + "\n### WorldSpec diff")
    assert "**1 breaking**, 1 dangerous, 1 safe, 0 info" in out
    assert "| breaking | `precondition-tightened` |" in out
    assert "<details><summary>Old and new values</summary>" in out
    assert "#### Impact" in out


def test_github_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _two_sides(tmp_path)
    assert main(["diff", str(old), str(new), "--format", "github"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"::error file={new / 'shop.world'},line=")
    assert "title=worldspec diff%3A breaking precondition-tightened::" in lines[0]
    assert lines[1].startswith("::warning ") and lines[2].startswith("::notice ")


def test_fail_on_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path / "old", BASE, None)
    new = _write(tmp_path / "new", BASE.replace('"Rename a customer."', '"Rename."'), None)
    assert main(["diff", str(old), str(new), "--no-impact"]) == 0
    assert main(["diff", str(old), str(new), "--no-impact", "--fail-on", "breaking"]) == 0
    assert main(["diff", str(old), str(new), "--no-impact", "--fail-on", "dangerous"]) == 1
    assert "impact: not analysed" in capsys.readouterr().out


# ------------------------------------------------------------ bad input
def test_errors_on_either_side_are_reported_not_raised(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good", BASE, None)
    bad = _write(tmp_path / "bad", BASE.replace("return len(customers)", "return nothing_here"),
                 None)
    assert main(["diff", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot compare: the new side" in captured.err and "nothing_here" in captured.err
    assert "Traceback" not in captured.err
    broken = _write(tmp_path / "syntax", "world {", None)
    assert main(["diff", str(broken), str(good)]) == 1
    assert "cannot compare: the old side" in capsys.readouterr().err


@pytest.mark.parametrize("args", [
    ["diff", "one-path-only.world"],
    ["diff", "missing-old", "missing-new"],
    ["diff", "a", "b", "c"],
])
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert "worldspec: error:" in capsys.readouterr().err


def test_trajectories_must_be_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(SHOP), str(SHOP), "--trajectories", str(tmp_path / "nope")]) == 2
    assert "'" + str(tmp_path / "nope") + "' does not exist" in capsys.readouterr().err


# -------------------------------------------------------------------- git
def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    specs = root / "specs"
    shutil.copytree(SHOP, specs / "shop")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "first")
    return root


def test_against_a_git_revision(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shop = repo / "specs" / "shop"
    _edit(shop / "shop.world", '"The customer\'s email address; case does not matter."',
          '"The customer\'s email address."')
    _edit(shop / "data" / "seed.json", '"price": 79.0, "stock": 0', '"price": 79.0, "stock": 1')
    code, report = _diff_json(capsys, "--against", "HEAD", str(shop))
    assert code == 0
    assert report["old"] == f"HEAD:{shop}"
    rules = sorted(c["rule"] for c in report["changes"])
    assert "param-description-changed" in rules
    assert "task-data-changed" in rules  # the data file was read at HEAD, not from disk
    change = next(c for c in report["changes"]
                  if c["rule"] == "param-description-changed")
    assert change["old_span"]["file"] == "HEAD:specs/shop/shop.world"
    assert change["span"]["file"] == str(shop / "shop.world")


def test_against_follows_imports_outside_the_paths(repo: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    tasks = repo / "specs" / "shop" / "tasks.world"
    code, report = _diff_json(capsys, "--against", "HEAD", str(tasks))
    assert code == 0 and report["changes"] == []
    (repo / "specs" / "shop" / "extra.world").write_text(OTHER_WORLD, encoding="utf-8")
    code, report = _diff_json(capsys, "--against", "HEAD", str(repo / "specs"))
    assert [c["rule"] for c in report["changes"]] == ["world-added"]


def test_against_bad_revision_and_not_a_repository(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shop = str(repo / "specs" / "shop")
    assert main(["diff", "--against", "no-such-branch", shop]) == 2
    assert "unknown revision 'no-such-branch'" in capsys.readouterr().err
    assert main(["diff", "--against", "--oops", shop]) == 2
    capsys.readouterr()
    outside = _write(tmp_path / "outside", BASE, None)
    assert main(["diff", "--against", "HEAD", str(outside)]) == 2
    assert "is not in a git repository" in capsys.readouterr().err


def test_diff_is_a_subcommand() -> None:
    assert "diff" in SUBCOMMANDS


# ------------------------------------------------------------------- docs
def test_docs_list_every_rule_with_its_level() -> None:
    text = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| (breaking|dangerous|safe|info) \|", text,
                           flags=re.MULTILINE))
    assert rows == {rule_id: row.level.value for rule_id, row in RULES.items()}
    for fmt in ("text", "json", "markdown", "github"):
        assert f"--format {fmt}" in text or fmt == "text"


def test_levels_rank_in_order() -> None:
    assert [lvl.rank for lvl in Level] == [3, 2, 1, 0]
