"""``worldspec diff --trajectories``: rollout journals, run folders and trajectory files.

A real journal is made by ``worldspec rollout`` against the scripted local server
(``tests/llm_server.py``): an agent that plays the reference solution of
``cancel_and_reorder``. The shop's working copy then tightens ``cancel_order``'s
precondition, so every recorded rollout replays differently. The commands ``docs/diff.md``
shows with ``--trajectories runs`` are run exactly as written, in a git repository whose
``main`` is the shop before the change.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main
from worldspec.rollout.records import FORMAT
from worldspec.services.loading import load_world

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "examples" / "shop"
TASK = "cancel_and_reorder"
TIGHTER = ('require order.status == pending else f"Order {order.id} cannot be cancelled',
           'require order.status == pending and order.customer.id != "C01" '
           'else f"Order {order.id} cannot be cancelled')


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=repo, check=True, capture_output=True)


def _solution_agent(solution: list[tuple[str, Any]]) -> Any:
    def respond(request: RecordedRequest) -> Reply | str:
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        if done >= len(solution):
            return "Done: the order is cancelled and the new one placed."
        name, arguments = solution[done]
        return Reply(tool_calls=[{"name": name, "arguments": json.dumps(arguments)}])

    return respond


@pytest.fixture
def repo(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository: ``main`` holds examples/shop; ``runs/`` a journal of two rollouts of
    its reference solution; the working copy's ``cancel_order`` refuses customer C01."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    shop = root / "examples" / "shop"
    shutil.copytree(SHOP, shop)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "the shop")
    monkeypatch.chdir(root)
    world = load_world(shop)
    llm_server.responder = _solution_agent(
        [(name, dict(arguments)) for name, arguments in world.TASKS[TASK].solution])
    assert main(["rollout", "examples/shop", "--task", TASK, "-n", "2", "--base-url",
                 llm_server.url, "--model", "scripted", "-o", "runs", "--progress",
                 "never"]) == 0
    assert (root / "runs" / "summary.json").is_file()
    text = (shop / "shop.world").read_text(encoding="utf-8")
    assert TIGHTER[0] in text
    (shop / "shop.world").write_text(text.replace(TIGHTER[0], TIGHTER[1]), encoding="utf-8")
    capsys.readouterr()
    return root


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _trajectories(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    code, out, _ = _diff(capsys, *args, "--format", "json")
    assert code == 0
    found: list[dict[str, Any]] = json.loads(out)["impact"]["trajectories"]
    return found


def documented_commands() -> list[str]:
    """The ``worldspec diff`` commands of docs/diff.md that replay ``runs``."""
    text = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    commands = re.findall(r"^(?:\$ )?(worldspec diff [^#\n]*--trajectories runs[^#\n]*)",
                          text, flags=re.MULTILINE)
    return [c.strip() for c in commands]


def test_the_docs_show_commands_with_a_runs_folder() -> None:
    assert len(documented_commands()) >= 2


@pytest.mark.parametrize("command", documented_commands())
def test_the_documented_commands_replay_a_rollout_journal(
        repo: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(command)
    assert argv[:2] == ["worldspec", "diff"]
    code, out, err = _diff(capsys, *argv[2:])
    assert code == 0, err
    assert "unreadable" not in out and "summary.json" not in out
    # both records of the journal replay differently, named by their line
    assert "runs/rollouts.jsonl:1" in out and "runs/rollouts.jsonl:2" in out


def test_a_journal_and_a_run_folder_are_accepted(repo: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from_folder = _trajectories(capsys, "--against", "main", "examples/shop",
                                "--trajectories", "runs")
    from_journal = _trajectories(capsys, "--against", "main", "examples/shop",
                                 "--trajectories", "runs/rollouts.jsonl")
    assert from_folder == from_journal
    assert [(t["file"], t["task"], t["status"]) for t in from_folder] == [
        ("runs/rollouts.jsonl:1", TASK, "changed"), ("runs/rollouts.jsonl:2", TASK, "changed")]
    first = from_folder[0]
    assert first["old_reward"] == 1.0 and first["new_reward"] < 1.0
    assert first["first_difference"]["tool"] == "cancel_order"
    # trajectory files of the kinds accepted before sit beside the journal: one record
    # (a journal of one line) and a file of calls named after its task
    record = json.loads((repo / "runs" / "rollouts.jsonl").read_text().splitlines()[0])
    (repo / "runs" / "picked.json").write_text(json.dumps(record), encoding="utf-8")
    calls = [{"name": s["name"], "arguments": json.loads(s["arguments"])}
             for s in record["steps"]]
    (repo / "runs" / f"{TASK}.calls.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")
    every = _trajectories(capsys, "--against", "main", "examples/shop", "--trajectories",
                          "runs")
    assert [(t["file"], t["task"]) for t in every] == [
        (f"runs/{TASK}.calls.jsonl", TASK), ("runs/picked.json:1", TASK),
        ("runs/rollouts.jsonl:1", TASK), ("runs/rollouts.jsonl:2", TASK)]
    assert {t["new_reward"] for t in every} == {first["new_reward"]}


def test_unreadable_files_say_which_and_why(repo: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = repo / "bad"
    bad.mkdir()
    (bad / f"{TASK}.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (bad / f"{TASK}.notes.jsonl").write_text("this is not JSON\n", encoding="utf-8")
    (bad / "old.jsonl").write_text(json.dumps({"format": "worldspec.rollout/0", "key": "k",
                                               "task": TASK}) + "\n", encoding="utf-8")
    (bad / "summary.json").write_text("{}", encoding="utf-8")  # no journal beside it
    found = {t["file"]: t for t in _trajectories(capsys, "--against", "main",
                                                 "examples/shop", "--trajectories", "bad")}
    assert {f: t["status"] for f, t in found.items()} == {
        f"bad/{TASK}.jsonl": "unreadable", f"bad/{TASK}.notes.jsonl": "unreadable",
        "bad/old.jsonl": "unreadable", "bad/summary.json": "unreadable"}
    assert found[f"bad/{TASK}.jsonl"]["message"] == \
        f"bad/{TASK}.jsonl: not UTF-8 text (byte 0 cannot be decoded)"
    assert found[f"bad/{TASK}.notes.jsonl"]["message"].startswith(
        f"bad/{TASK}.notes.jsonl:1: not JSON: ")
    assert found["bad/old.jsonl"]["message"] == (
        f"bad/old.jsonl: a record of format 'worldspec.rollout/0'; this worldspec reads "
        f"{FORMAT!r}")
    assert found["bad/summary.json"]["message"].startswith("bad/summary.json")
    # a garbage file named on its own is refused the same way, and a missing path is a
    # usage error
    code, out, _ = _diff(capsys, "--against", "main", "examples/shop", "--trajectories",
                         f"bad/{TASK}.jsonl")
    assert code == 0 and "not UTF-8 text" in out
    code, _, err = _diff(capsys, "--against", "main", "examples/shop", "--trajectories",
                         "nowhere")
    assert code == 2 and "'nowhere' does not exist" in err
