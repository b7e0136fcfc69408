"""One budget per call: steps, integer size and string size, for every construct.

A call that runs away (nested loops, a recursive helper, a comprehension inside a loop, an
integer squared again and again, a string doubled again and again, a huge ``zfill`` or format
width) fails with a message naming the part of the budget it spent, and is rolled back; it
never hangs and never exhausts memory. Each attack runs in a child process under a wall-clock
timeout and an address-space limit (``RLIMIT_AS``), so a regression fails the test instead of
hanging or killing CI. Constants the checker can judge (a literal format width, a sequence
format, ``zfill`` of a literal) are reported at check time instead (WS410-WS412).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spec_support import compile_text, generated_source

from worldspec.compiler.api import check_source

REPO = Path(__file__).resolve().parents[1]
#: wall-clock seconds a child may run (a budgeted attack takes about a second)
TIMEOUT = 120
#: address space a child may use: the interpreter and the runtime fit easily
MEMORY = 1024 * 1024 * 1024

STEPS = "The call used more than 1,000,000 steps."
INT_BITS = "An integer would have more than 4,096 bits."
LONG_STRING = "A string would be longer than 1,000,000 characters."
TEXT_BUILT = "The call built more than 10,000,000 characters of text."

ATTACKS = """\
world Attacks "Tools that run away, one per part of the budget."

config { results: envscaler }

entity Item { key id: int  size: int = 1 }

state {
  items: table Item
  counter: int = 0
  text: str = ""
  numbers: list[int] = []
}

fn fork(k: int) -> int "Two recursive calls per level: 2 ** k calls in all." {
  if k <= 0 { return 1 }
  return fork(k - 1) + fork(k - 1)
}

fn ping(k: int) -> int "Recursion through another helper." {
  if k <= 0 { return 1 }
  return pong(k - 1) + pong(k - 1)
}

fn pong(k: int) -> int "Calls ping back." {
  return ping(k)
}

tool nested_while() -> int "10 ** 10 rounds in all, 10 ** 5 per loop." {
  let i = 0
  let total = 0
  while i < 100000 {
    let j = 0
    while j < 100000 {
      j += 1
      total += 1
    }
    i += 1
  }
  counter = total
  return total
}

tool nested_for() -> int "for loops over ranges, nested." {
  let total = 0
  for i in range(100000) {
    for j in range(100000) {
      total += 1
    }
  }
  counter = total
  return total
}

tool recursion(k: int) -> int "A helper that calls itself twice per level." {
  counter = 1
  return fork(k)
}

tool mutual_recursion(k: int) -> int "Helpers that call each other." {
  counter = 1
  return ping(k)
}

tool comprehension_in_loop() -> int "A comprehension over 100,000 numbers, 100,000 times." {
  let xs = range(100000)
  let total = 0
  let i = 0
  while i < 100000 {
    total += count([x for x in xs if x > 5])
    i += 1
  }
  counter = total
  return total
}

tool aggregates_in_loop() -> int "Quantifiers, sums and sorts of big lists inside a loop." {
  let xs = range(100000)
  let total = 0
  for i in range(100000) {
    if all x in xs: x >= 0 {
      total += sum(sorted(xs)) + len(",".join([str(x) for x in xs]))
    }
  }
  counter = total
  return total
}

tool membership_in_loop() -> int "`in` on a big list, in a loop." {
  let xs = range(100000)
  let total = 0
  for i in range(100000) {
    if 99999 in xs { total += 1 }
  }
  counter = total
  return total
}

tool square(seed: int) -> int "x = x * x until it is huge." {
  counter = 1
  let x = seed
  let i = 0
  while i < 64 {
    x = x * x
    i += 1
  }
  return x % 10
}

tool double_int() -> int "x = x + x, a million times." {
  counter = 1
  let x = 1
  let i = 0
  while i < 900000 {
    x = x + x
    i += 1
  }
  return x % 10
}

tool digits(n: int) -> int "random_digits(n)." {
  counter = 1
  return len(random_digits(n))
}

tool double_string() -> int "s = s + s until it is huge." {
  counter = 1
  let s = "ab"
  let i = 0
  while i < 64 {
    s = s + s
    i += 1
  }
  text = s
  return len(s)
}

tool many_strings() -> int "Many long strings, each under the length limit." {
  counter = 1
  let s = "x".zfill(900000)
  let xs = [s + "y" for i in range(100)]
  return len(xs)
}

tool pad(n: int) -> int "zfill of a width from the agent." {
  counter = 1
  return len("7".zfill(n))
}

tool widen(spec: str) -> int "format() with a spec from the agent." {
  counter = 1
  return len(format(7, spec))
}

tool grow_list() -> int "xs = xs + xs until it is huge." {
  counter = 1
  let xs = [1, 2]
  let i = 0
  while i < 64 {
    xs = xs + xs
    i += 1
  }
  numbers = xs
  return len(xs)
}

tool append_loop() -> int "append in a loop: each append copies the list." {
  counter = 1
  let xs: list[int] = []
  for i in range(100000) {
    for j in range(100) {
      append j to xs
    }
  }
  numbers = xs
  return len(xs)
}

tool replace_growth() -> int "replace that multiplies a string's length." {
  counter = 1
  let s = "abcdefghij"
  let i = 0
  while i < 64 {
    s = s.replace("a", s)
    i += 1
  }
  text = s
  return len(s)
}

tool fine() -> int "A small call that must still work." {
  counter = counter + 1
  return sum([x * 2 for x in range(1000)]) + len(f"{counter:05d}".zfill(8))
}
"""

#: tool, arguments, the message its call must fail with
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("nested_while", {}, STEPS),
    ("nested_for", {}, STEPS),
    ("recursion", {"k": 60}, STEPS),
    ("mutual_recursion", {"k": 60}, STEPS),
    ("comprehension_in_loop", {}, STEPS),
    ("aggregates_in_loop", {}, STEPS),
    ("membership_in_loop", {}, STEPS),
    ("square", {"seed": 3}, INT_BITS),
    ("double_int", {}, INT_BITS),
    ("digits", {"n": 10**9}, LONG_STRING),
    ("double_string", {}, LONG_STRING),
    ("many_strings", {}, TEXT_BUILT),
    ("pad", {"n": 10**9}, LONG_STRING),
    ("widen", {"spec": "2000000000d"}, LONG_STRING),
    ("widen", {"spec": ".2000000000f"}, LONG_STRING),
    ("grow_list", {}, STEPS),
    ("append_loop", {}, STEPS),
    ("replace_growth", {}, LONG_STRING),
]

#: Runs in the child: load the package, make the call, print what it returned as JSON.
CHILD = """\
import json, resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from worldspec.services.loading import load_package
world = load_package(sys.argv[1]).World()
before = world.state_hash()
result = world.call(sys.argv[3], json.loads(sys.argv[4]))
after = world.state_hash()
fine = world.call("fine", {})
print(json.dumps({"result": result, "rolled_back": before == after, "fine": fine}))
"""


def run_child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter under the timeout and the memory limit."""
    try:
        return subprocess.run([sys.executable, "-c", script, *args], cwd=REPO,
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child ran for more than {TIMEOUT} s: the budget does not stop it")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The attack world compiled once; the folder of its generated package."""
    world = compile_text(tmp_path_factory.mktemp("attacks"), "attacks.world", ATTACKS, "Attacks")
    return Path(sys.modules[world.__module__].__file__ or "").parent


@pytest.mark.parametrize(("tool", "arguments", "message"), CASES,
                         ids=[f"{tool}-{i}" for i, (tool, _, _) in enumerate(CASES)])
def test_a_runaway_call_fails_naming_the_budget(package: Path, tool: str,
                                                arguments: dict[str, Any], message: str) -> None:
    done = run_child(CHILD, str(package), str(MEMORY), tool, json.dumps(arguments))
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["result"] == {"success": False, "error": message}
    assert outcome["rolled_back"], "the failed call left changes behind"
    assert outcome["fine"]["success"], "the next call does not get a fresh budget"


# ------------------------------------------------------------ task validation and scoring
RUNAWAY_TASK = """\
world Spinner "A tool that spins, and a task whose solution and check run away."

config { results: envscaler }

state { turns: int = 0 }

tool spin() -> int "Spins for 10 ** 10 rounds." {
  let i = 0
  while i < 100000 {
    let j = 0
    while j < 100000 { j += 1 }
    i += 1
  }
  turns = i
  return i
}

tool nudge() -> int "A small step." {
  turns = turns + 1
  return turns
}

task spin_once in Spinner "Spin once." {
  given { turns: 0 }
  instruction "Spin the spinner once."
  check spun "The spinner turned.": turns > 0
  solution { spin() }
}

task nudge_once in Spinner "Nudge once; a check counts 10 ** 10 pairs." {
  given { turns: 0 }
  instruction "Nudge the spinner once."
  check counted "Counts every pair.":
    count([i for i in range(100000) if any j in range(100000): j == -1]) == 0
  solution { nudge() }
}
"""

#: Runs in the child: ``worldspec check`` on the spec, then ``score`` of the second task.
CHECK_CHILD = """\
import io, json, resource, sys
from contextlib import redirect_stdout
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from worldspec.cli.main import main
out = io.StringIO()
with redirect_stdout(out):
    status = main(["check", "--format", "json", sys.argv[1]])
from worldspec.services.loading import load_world
world = load_world(sys.argv[1])(task="nudge_once")
world.call("nudge", {})
score = world.score()
print(json.dumps({"status": status, "check": json.loads(out.getvalue()),
                  "outcomes": [[c.name, c.passed, c.message] for c in score.checks]}))
"""


def test_task_validation_reports_a_runaway_solution_and_scoring_a_runaway_check(
        tmp_path: Path) -> None:
    """``worldspec check`` replays solutions through ``call``, under the same budget: a
    solution that runs away is a WS610, not a hang; a check that runs away fails, with the
    budget's message, instead of hanging ``score``."""
    spec = tmp_path / "spinner.world"
    spec.write_text(RUNAWAY_TASK, encoding="utf-8")
    done = run_child(CHECK_CHILD, str(spec), str(MEMORY))
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["status"] == 1
    found = [(d["code"], d["message"]) for d in outcome["check"]]
    assert ("WS610", f"solution call spin() fails: {STEPS}") in found, found
    assert ("WS611", f"check 'counted' is false after the reference solution (error: {STEPS})"
            ) in found, found
    assert outcome["outcomes"] == [["counted", False, f"error: {STEPS}"]]


# ------------------------------------------------------------------ constants, at check time
CONSTANTS = """\
world Consts "Constants the checker judges."

state {{
  code: str = "7"
  total: int = 0
}}

tool t(spec: str) -> str "t." {{
  {body}
}}
"""


@pytest.mark.parametrize(("body", "code", "message"), [
    ('return format(total, "2000000000d")', "WS410",
     "format spec '2000000000d' asks for 2,000,000,000 characters; a call may build strings "
     "of at most 1,000,000"),
    ('return f"{total:.1000001f}"', "WS410",
     "format spec '.1000001f' asks for 1,000,001 characters; a call may build strings of at "
     "most 1,000,000"),
    ('return f"{total:' + "9" * 5000 + 'd}"', "WS410",
     "format spec '" + "9" * 5000 + "d' asks for a 5,000-digit number characters; a call may "
     "build strings of at most 1,000,000"),
    ("return random_digits(2 * 10 ** 6)", "WS412",
     "random_digits() builds a string of 2,000,000 characters; a call may build at most "
     "1,000,000"),
    ("return str(count(range(-5, 100000)))", "WS413",
     "this range has 100,005 elements; range may build at most 100,000"),
])
def test_constants_over_the_budget_are_reported_at_check_time(body: str, code: str,
                                                              message: str) -> None:
    result = check_source(CONSTANTS.format(body=body), "consts.world")
    assert [(d.code, d.message) for d in result.diagnostics] == [(code, message)]


@pytest.mark.parametrize("body", [
    'return format(total, "1000000d")', 'return f"{total:>1000000}"',
    "return code.zfill(10 ** 6)", "return random_digits(1000000)",
    "return str(count(range(100000)))", "return code.zfill(len(spec) * 10 ** 9)",
    'return format(total, spec)',
])
def test_constants_within_the_budget_and_computed_values_pass_the_checker(body: str) -> None:
    result = check_source(CONSTANTS.format(body=body), "consts.world")
    assert result.diagnostics == ()


def test_the_checker_judges_against_the_runtime_limits() -> None:
    """The compiler does not import the runtime, so it keeps copies of the limits."""
    from worldspec.compiler import builtins
    from worldspec.runtime import budget, helpers

    assert builtins.MAX_STRING == budget.MAX_STRING
    assert builtins.MAX_RANGE == helpers.MAX_RANGE


# ----------------------------------------------------------------- one table of builtins
def test_builtins_are_one_table_with_their_emitter_and_charge() -> None:
    """Every builtin and method row says how it is emitted; an ``@name`` emitter exists, and
    every custom emitter belongs to a row (no second table of signatures in the generator)."""
    from worldspec.compiler.builtins import BUILTIN_FUNCTIONS, METHODS
    from worldspec.compiler.codegen.calls import CUSTOM_EMITTERS

    custom = {b.emit for b in BUILTIN_FUNCTIONS.values() if b.emit.startswith("@")}
    custom |= {m.emit for methods in METHODS.values() for m in methods.values()
               if m.emit.startswith("@")}
    assert custom == set(CUSTOM_EMITTERS)
    for name, builtin in BUILTIN_FUNCTIONS.items():
        if not builtin.emit.startswith("@"):
            names = {p.rstrip("?") for p in builtin.params} | {"ep"}
            fields = set(re.findall(r"{(\w+)}", builtin.emit))
            assert fields <= names, name
        for part in (builtin.charge.steps, builtin.charge.width, builtin.charge.spec):
            assert part is None or part in {p.rstrip("?") for p in builtin.params}, name
    for kind, methods in METHODS.items():
        for name, method in methods.items():
            fields = set(re.findall(r"{(\w+)}", method.emit))
            assert fields <= set(method.params) | {"recv", "ep"}, (kind, name)


# ---------------------------------------------------------------------- the fast path
FAST = """\
world Fast "What the budget leaves alone."

config { results: envscaler }

state { n: int = 0  label: str = "" }

tool bump(by: int) -> int "Counters and short text stay plain Python." {
  n = n + 1
  let twice = by * 2
  label = f"{n:04d} at {now}"
  return twice
}
"""


def test_the_fast_path_stays_plain(tmp_path: Path) -> None:
    """Adding a literal, and f-strings of numbers and dates, are not charged (they cannot run
    away); a product is bounded; the world still computes the same values."""
    world = compile_text(tmp_path, "fast.world", FAST, "Fast")
    source = generated_source(world)
    body = source[source.index("def tool_bump"):]
    assert "self.state.n + 1" in body and "rt.bounded(self.state.n + 1)" not in body
    assert "rt.bounded(by * 2)" in body
    assert ".built(" not in body.split("def ", 2)[1]
    ep = world()
    assert ep.call("bump", {"by": 21}) == {"success": True, "data": 42}
    assert ep.state.label == "0001 at 2024-01-01 00:00:00"


def test_calculate_keeps_pythons_text_for_big_int_arithmetic() -> None:
    """tau2's calculate: an int sum or product past the language's 4,096-bit ints (which
    arithmetic() computes within its own cost guard) fails with Python's own text (its
    final float() of such an int), not the budget's."""
    from worldspec.services.loading import load_package

    episode = load_package(REPO / "generated" / "tau2_retail").World()
    for expression in ("1" * 4300 + " + 1", "1" * 1300 + " * " + "1" * 1300,
                       "1" * 4300 + " - 1"):
        assert episode.call("calculate", {"expression": expression}) == \
            "Error: int too large to convert to float"
    assert episode.call("calculate", {"expression": "2**1000 * 2**10 // 2**1009"}) == "2.0"


HOIST = """\
world Hoist "A statement's charges, drawn where it processes the list."

config { results: envscaler }

tool both(xs: list[int]) -> int "Two counts in one statement: both are paid." {
  return xs.count(1) + xs.count(2)
}

tool branches(xs: list[int], ys: list[int], flag: bool) -> int
  "Counts in an untaken branch, right of a false `and`, in a comprehension body: free." {
  let a = if flag then xs.count(1) else 0
  let b = flag and xs.count(2) > 0
  let c = [y for y in ys if xs.count(y) > 0]
  let d = xs.count(3)
  return a + d + len(c)
}
"""


def test_a_statements_charges_are_drawn_only_where_it_runs(tmp_path: Path) -> None:
    """Counting a list argument twice in one statement pays for both, each where it counts
    (through the runtime's ``rt.each``, no budget internals in the generated code); a count
    in an untaken
    branch of `if … then … else`, on the right of a false `and` or in the body of a
    comprehension over an empty list is not paid."""
    world = compile_text(tmp_path, "hoist.world", HOIST, "Hoist")
    source = generated_source(world)
    both = source[source.index("def tool_both"):source.index("def tool_branches")]
    assert "_steps" not in both and both.count("rt.each(self, xs)") == 2
    ep = world()
    small = [1, 2, 2, 3]
    assert ep.call("both", {"xs": small}) == {"success": True, "data": 3}
    half = [3] * 600_000  # one count fits in the 1,000,000 steps, two do not
    assert ep.call("both", {"xs": half}) == {"success": False, "error": STEPS}
    assert ep.call("branches", {"xs": half, "ys": [], "flag": False}) == \
        {"success": True, "data": 600_000}
    assert ep.call("branches", {"xs": half, "ys": [], "flag": True}) == \
        {"success": False, "error": STEPS}
    assert ep.call("branches", {"xs": small, "ys": [2, 5], "flag": True}) == \
        {"success": True, "data": 1 + 1 + 1}


REFUSE = """\
world Refuse
tool label(name: str "A name.") -> str "Refuse a long name." {
  require name != "" else "A name is needed."
  require len(name) < 5 else f"The name {name} is too long."
  return name
}
tool retry(name: str "A name.") -> str "Fail with the name." {
  fail f"Try {name} later."
}
"""


def test_a_failure_message_the_call_builds_is_charged_like_any_built_string(
        tmp_path: Path) -> None:
    """``require ... else f"..."`` and ``fail f"..."`` with text in the message go through
    the episode's ``fail``, which charges the message as ``self.built`` does (a message past
    the string limit fails naming the limit); a constant message is raised as it is."""
    world = compile_text(tmp_path, "refuse.world", REFUSE, "Refuse")
    source = generated_source(world)
    body = source[source.index("def tool_label"):]
    assert "raise ToolError('A name is needed.')" in body
    assert "self.fail(f'The name {name} is too long.')" in body
    assert "self.fail(f'Try {name} later.')" in body
    assert ".built(" not in body.split("\n\n\n")[0]
    ep = world()
    assert ep.call("label", {"name": "Ann"}) == {"success": True, "data": "Ann"}
    assert ep.call("label", {"name": ""}) == {"success": False, "error": "A name is needed."}
    assert ep.call("label", {"name": "Annabel"}) == \
        {"success": False, "error": "The name Annabel is too long."}
    assert ep.call("retry", {"name": "Ann"}) == {"success": False, "error": "Try Ann later."}
    huge = "x" * 999_990  # fits the string limit; the message around it does not
    assert ep.call("label", {"name": huge}) == {"success": False, "error": LONG_STRING}
    assert ep.call("retry", {"name": huge}) == {"success": False, "error": LONG_STRING}
