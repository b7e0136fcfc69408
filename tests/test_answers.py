"""Policies and answer checks: what the agent must follow, and what it tells the user.

A world's ``policy`` (inline text or a file next to the spec) becomes ``POLICY`` on the
generated episode and part of the exported system prompt. A task check may read the
conversation: ``reply`` (the agent's last message) and ``replies`` (all of them); the
solution's ``reply "..."`` is the reference answer validation runs the checks against, and
``Episode.score(replies=[...])`` grades a real conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worldspec.cli.main import main
from worldspec.compiler.api import check_source, check_specs
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.runtime.episode import Episode
from worldspec.services.loading import compile_worlds
from worldspec.services.validation import check_paths

ROOT = Path(__file__).resolve().parents[1]

SHOP = '''world Shop "A shop."

entity Order "An order." {
  key id: str
  total: float
  cancelled: bool = false
}

state {
  orders: table Order
}

tool get_order(order: Order "The order.") -> Order "Read an order." {
  return order
}

tool cancel_order(order: Order "The order.") "Cancel an order." {
  require not order.cancelled else "Already cancelled."
  order.cancelled = true
}
'''

TASKS = '''
task tell_total in Shop {
  given { orders: [{id: "W1", total: 1234.56}] }
  instruction "What does order W1 cost?"
  check told weight 2: reply.contains("$1,234.56")
  check mentioned: any r in replies: r.lower().contains("total")
  only changes nothing
  solution {
    get_order(order: "W1")
    reply "Let me look that up."
    reply "Your total is $1,234.56."
  }
}

task cancel_and_tell in Shop {
  given { orders: [{id: "W1", total: 10.0}] }
  instruction "Cancel W1 and tell me when it is done."
  check done: orders["W1"].cancelled
  check told: reply.contains("cancelled")
  solution { cancel_order(order: "W1") reply "Order W1 is cancelled." }
}
'''


def _write(folder: Path, text: str, name: str = "shop.world") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _world(folder: Path, text: str) -> type[Episode]:
    return compile_worlds([_write(folder, text)]).worlds["Shop"]


def _codes(text: str) -> list[str]:
    return [d.code for d in check_source(text, "shop.world").diagnostics]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return _world(tmp_path_factory.mktemp("answers"), SHOP + TASKS)


# ------------------------------------------------------------------ policies
def test_an_inline_policy_is_the_episodes_policy(tmp_path: Path) -> None:
    text = SHOP.replace('world Shop "A shop."\n', 'world Shop "A shop."\n\npolicy """\n'
                        '  Confirm before you cancel.\n  Never guess an order id.\n  """\n')
    world = _world(tmp_path, text)
    assert world.POLICY == "Confirm before you cancel.\nNever guess an order id."
    assert world().POLICY == world.POLICY


def test_a_world_without_a_policy_has_the_empty_policy(shop: type[Episode]) -> None:
    assert shop.POLICY == "" == Episode.POLICY
    assert "POLICY" not in vars(shop)  # nothing emitted: the runtime's default holds


def test_a_policy_file_is_read_next_to_the_spec(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "policy.md").write_bytes(
        "\n# Rules\r\n\r\nBe exact: caf\u00e9 prices in \u20ac.\r\n\n".encode())
    text = SHOP.replace('world Shop "A shop."\n', 'world Shop "A shop."\npolicy file '
                        '"rules/policy.md"\n')
    world = _world(tmp_path, text)
    # line endings normalised, surrounding blank lines dropped, the text kept otherwise
    assert world.POLICY == "# Rules\n\nBe exact: caf\u00e9 prices in \u20ac."


@pytest.mark.parametrize("make, message", [
    (lambda folder: None, "policy file 'policy.md' not found"),
    (lambda folder: (folder / "policy.md").mkdir(), "policy file 'policy.md' cannot be read"),
    (lambda folder: (folder / "policy.md").write_bytes(b"caf\xe9"),
     "policy file 'policy.md' is not UTF-8 text (byte 3)"),
])
def test_a_bad_policy_file_is_WS213(tmp_path: Path, make: Any, message: str) -> None:
    make(tmp_path)
    spec = _write(tmp_path, SHOP + 'policy file "policy.md"\n')
    result = check_specs([spec])
    assert [(d.code, d.message.split(":")[0]) for d in result.diagnostics] == [
        ("WS213", message.split(":")[0])]
    assert result.diagnostics[0].message.startswith(message)
    assert main(["check", str(spec)]) == 1  # a diagnostic, never a traceback


def test_one_policy_per_world_and_only_in_a_world() -> None:
    assert _codes(SHOP + 'policy "One."\npolicy "Two."\n') == ["WS504"]
    assert _codes('policy "Be kind."\n') == ["WS504"]


def test_the_export_shows_the_policy_in_the_system_prompt(tmp_path: Path) -> None:
    text = SHOP.replace('world Shop "A shop."\n', 'world Shop "A shop."\npolicy "Confirm '
                        'before you cancel."\n') + TASKS
    spec = _write(tmp_path, text)
    out = tmp_path / "rows.jsonl"
    assert main(["export", str(spec), "-o", str(out)]) == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    system = row["prompt"][0]["content"]
    assert system.startswith("You are an assistant operating Shop: A shop.\n"
                             "\nConfirm before you cancel.\n\nThe current time is ")


def test_the_examples_have_policies() -> None:
    from worldspec.services.loading import load_world

    retail = load_world(ROOT / "examples" / "tau2" / "retail.world")
    messaging = load_world(ROOT / "examples" / "messaging")
    assert retail.POLICY == (ROOT / "examples" / "tau2" / "policy.md").read_text(
        encoding="utf-8").strip("\n")
    assert "find_user_id_by_email" in retail.POLICY
    assert messaging.POLICY.startswith("You act on behalf of the user who signs in")


# ------------------------------------------------------------- the language
def test_reply_and_replies_exist_only_in_checks() -> None:
    tool = 'tool note() -> str "Echo." {\n  return reply\n}\n'
    invariant = 'invariant quiet "Quiet.": len(replies) == 0\n'
    helper = 'fn said() -> str "The reply." {\n  return reply\n}\n'
    default = 'entity Note "A note." {\n  key id: str\n  text: str = reply\n}\n'
    for extra in (tool, invariant, helper, default):
        result = check_source(SHOP + extra, "shop.world")
        assert [d.code for d in result.diagnostics] == ["WS212"], extra
        assert "exists only in task checks" in result.diagnostics[0].message


def test_reply_is_a_str_and_replies_a_list_of_str() -> None:
    task = ('task t in Shop {{\n  instruction "Hi."\n  check c: {}\n'
            '  solution {{ reply "Hi." }}\n}}\n')
    assert _codes(SHOP + task.format('reply.upper().startswith("HI")')) == []
    assert _codes(SHOP + task.format('all r in replies: len(r) < 500')) == []
    assert _codes(SHOP + task.format('"Hi" in replies and count(replies) == 1')) == []
    assert _codes(SHOP + task.format('reply + 1 == 2')) == ["WS304"]
    assert _codes(SHOP + task.format('replies.contains(1)')) == ["WS301"]
    assert _codes(SHOP + task.format('reply')) == ["WS302"]


def test_a_local_named_reply_shadows_the_conversation(tmp_path: Path) -> None:
    task = ('task t in Shop {\n  instruction "Hi."\n'
            '  check c: any reply in ["no", "yes"]: reply == "yes"\n}\n')
    world = _world(tmp_path, SHOP + task)
    assert world(task="t").score().reward == 1.0  # not the (empty) conversation


def test_a_tool_may_be_called_reply(tmp_path: Path) -> None:
    tool = 'tool reply(text: str "What to say.") -> str "Say something." {\n  return text\n}\n'
    task = ('task t in Shop {\n  instruction "Say hi."\n  check c: reply == "hi"\n'
            '  solution {\n    reply(text: "hi")\n    reply "hi"\n  }\n}\n')
    world = _world(tmp_path, SHOP + tool + task)
    assert [name for name, _ in world.TASKS["t"].solution] == ["reply"]
    assert world.TASKS["t"].replies == ("hi",)


def test_state_cannot_take_a_conversation_name_but_a_helper_can(tmp_path: Path) -> None:
    state = SHOP.replace("  orders: table Order\n", "  orders: table Order\n  reply: str = \"\"\n")
    result = check_source(state, "shop.world")
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS208", "state 'reply' clashes with `reply` of task checks (the agent's last "
                  "message to the user)")]
    helper = 'fn reply(text: str) -> str "Shout." {\n  return text.upper()\n}\n'
    task = ('task t in Shop {\n  instruction "Hi."\n  check c: reply("hi") == reply\n'
            '  solution { reply "HI" }\n}\n')
    world = _world(tmp_path, SHOP + helper + task)
    assert world(task="t").score(replies=["HI"]).reward == 1.0
    assert world(task="t").score(replies=["hi"]).reward == 0.0


def test_solution_items_keep_their_order() -> None:
    sink = DiagnosticSink()
    module = parse_module(SHOP + TASKS, "shop.world", sink).module
    solution = module.decls[-2].solution  # type: ignore[union-attr]
    assert solution is not None
    assert [type(i).__name__ for i in solution.items] == ["SolutionCall", "SolutionReply",
                                                         "SolutionReply"]
    assert [r.text for r in solution.replies] == ["Let me look that up.",
                                                  "Your total is $1,234.56."]


# ----------------------------------------------------------------- scoring
def test_score_reads_the_last_reply_and_every_reply(shop: type[Episode]) -> None:
    episode = shop(task="tell_total")
    assert [c.passed for c in episode.score().checks] == [False, False]  # nothing said
    assert episode.score(replies=["Your total is $1,234.56."]).reward == 1.0
    # `reply` is the last message; `replies` are all of them
    late = episode.score(replies=["The total is $1,234.56.", "Anything else?"])
    assert [(c.name, c.passed) for c in late.checks] == [("told", False), ("mentioned", True)]
    assert late.reward == pytest.approx(1 / 3)


def test_score_takes_answers_and_state_together(shop: type[Episode]) -> None:
    episode = shop(task="cancel_and_tell")
    assert episode.score(replies=["Order W1 is cancelled."]).reward == 0.5  # said, not done
    episode.call("cancel_order", {"order": "W1"})
    assert episode.score().reward == 0.5  # done, not said
    assert episode.score(replies=("It is cancelled.",), all_or_nothing=True).reward == 1.0
    assert episode.copy().score(replies=["cancelled"]).reward == 1.0


@pytest.mark.parametrize("bad", ["Your total is $1,234.56.", ["ok", None], [b"bytes"]])
def test_score_refuses_replies_that_are_not_a_list_of_text(shop: type[Episode],
                                                           bad: Any) -> None:
    with pytest.raises(TypeError, match="replies must be a list of message texts"):
        shop(task="tell_total").score(replies=bad)


def test_reference_replies_are_emitted_only_for_tasks_that_have_them(
        tmp_path: Path) -> None:
    task = ('task plain in Shop {\n  given { orders: [{id: "W1", total: 1.0}] }\n'
            '  instruction "Cancel W1."\n  check done: orders["W1"].cancelled\n'
            '  solution { cancel_order(order: "W1") }\n}\n')
    out = tmp_path / "gen"
    assert main(["build", str(_write(tmp_path, SHOP + TASKS + task)), "-o", str(out)]) == 0
    tasks = (out / "shop" / "tasks.json").read_text(encoding="utf-8")
    spec_of = {task["name"]: task for task in json.loads(tasks)}
    assert spec_of["tell_total"]["replies"] == ["Let me look that up.",
                                                "Your total is $1,234.56."]
    assert "replies" not in spec_of["plain"]
    first = [(out / "shop" / name).read_bytes() for name in ("tasks.json", "world.py")]
    assert main(["build", str(tmp_path / "shop.world"), "-o", str(out)]) == 0
    assert [(out / "shop" / name).read_bytes()
            for name in ("tasks.json", "world.py")] == first  # deterministic


# -------------------------------------------------------------- validation
def _problems(tmp_path: Path, text: str) -> dict[str, list[str]]:
    validated = check_paths([_write(tmp_path, text)])
    return {r.task: [p.code for p in r.problems] for r in validated.tasks}


def test_reference_replies_validate_the_answer_checks(tmp_path: Path) -> None:
    validated = check_paths([_write(tmp_path, SHOP + TASKS)])
    assert validated.ok and [r.valid for r in validated.tasks] == [True, True]
    assert [r.problems for r in validated.tasks] == [[], []]


def test_a_reference_reply_that_fails_its_check_is_WS622(tmp_path: Path) -> None:
    text = SHOP + TASKS.replace('"Your total is $1,234.56."', '"Your total is $1,234.65."')
    validated = check_paths([_write(tmp_path, text)])
    (problem,) = [p for r in validated.tasks for p in r.problems]
    assert problem.code == "WS622"
    assert problem.message == ("check 'told' is false for the reference reply "
                               "\"Your total is $1,234.65.\"")


def test_an_answer_check_that_holds_on_silence_is_reported(tmp_path: Path) -> None:
    """Doing nothing is saying nothing: a check that an empty conversation passes rewards it."""
    task = ('task polite in Shop {\n  given { orders: [{id: "W1", total: 1.0}] }\n'
            '  instruction "Say hi."\n  check no_rudeness: not reply.contains("idiot")\n'
            '  solution { reply "Hi!" }\n}\n')
    assert _problems(tmp_path, SHOP + task) == {"polite": ["WS614"]}
    both = task.replace('  solution', '  check greeted: reply.startswith("Hi")\n  solution')
    assert _problems(tmp_path, SHOP + both) == {"polite": ["WS613"]}


def test_answer_checks_need_a_reference_reply_and_replies_a_check() -> None:
    silent = TASKS.replace('    reply "Let me look that up."\n    reply "Your total is '
                           '$1,234.56."\n', '')
    assert _codes(SHOP + silent) == ["WS620"]
    unread = TASKS.replace('  check told: reply.contains("cancelled")\n', '')
    assert _codes(SHOP + unread) == ["WS621"]
    without_solution = ('task ask in Shop {\n  instruction "Hi."\n'
                        '  check c: reply.contains("hi")\n}\n')
    assert _codes(SHOP + without_solution) == []  # nothing to validate against


# --------------------------------------------------------------------- run
def test_run_scores_the_solutions_reply(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec = _write(tmp_path, SHOP + TASKS)
    assert main(["run", str(spec), "--task", "tell_total", "--solution", "--format",
                 "json"]) == 0
    assert json.loads(capsys.readouterr().out)["reward"] == 1.0


def test_run_scores_what_a_transcript_says(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    spec = _write(tmp_path, SHOP + TASKS)
    call = {"id": "c1", "type": "function",
            "function": {"name": "cancel_order", "arguments": '{"order": "W1"}'}}
    transcript = [
        {"role": "user", "content": "Cancel W1 please."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        {"role": "assistant", "content": [{"type": "text", "text": "Order W1 is "},
                                          {"type": "text", "text": "cancelled."}]},
    ]
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")
    assert main(["run", str(spec), "--task", "cancel_and_tell", "--calls", str(path),
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reward"] == 1.0 and [c["passed"] for c in out["checks"]] == [True, True]
    transcript[-1] = {"role": "assistant", "content": "Done!"}
    path.write_text("\n".join(json.dumps(m) for m in transcript), encoding="utf-8")
    assert main(["run", str(spec), "--task", "cancel_and_tell", "--calls", str(path),
                 "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["reward"] == 0.5


def test_diff_replays_what_a_recorded_trajectory_said(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A reworded answer check changes the reward of a recorded conversation; the policy
    change is reported as one."""
    old = _write(tmp_path / "old", SHOP + TASKS)
    new_text = SHOP.replace('world Shop "A shop."\n', 'world Shop "A shop."\npolicy "Be brief."\n')
    new = _write(tmp_path / "new", new_text + TASKS.replace('reply.contains("$1,234.56")',
                                                            'reply.contains("USD 1,234.56")'))
    runs = tmp_path / "runs"
    runs.mkdir()
    said = [{"role": "user", "content": "What does W1 cost?"},
            {"role": "assistant", "content": "Your total is $1,234.56."}]
    (runs / "tell_total.json").write_text(json.dumps(said), encoding="utf-8")
    main(["diff", str(old), str(new), "--trajectories", str(runs), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert "policy-changed" in {c["rule"] for c in out["changes"]}
    (replayed,) = out["impact"]["trajectories"]
    assert (replayed["old_reward"], replayed["new_reward"]) == (1.0, pytest.approx(1 / 3))
    assert replayed["checks"] == [{"check": "told", "old": "passed", "new": "failed"}]
