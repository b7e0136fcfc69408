"""``worldspec build`` and ``worldspec run``: files written, staleness checks, replays, exits.

The examples are copied into a scratch folder that is also the working directory, so the
commands see short relative paths and never touch the repository. Compiled worlds go to a
scratch cache (``WORLDSPEC_CACHE``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from worldspec.cli.main import SUBCOMMANDS, main

REPO = Path(__file__).resolve().parent.parent
#: the three main example worlds (with tasks and data); the conformance worlds have neither
PACKAGES = ("clinic_scheduling", "mobile_messaging", "online_shop")
#: every world under examples/, by name, with its package
WORLDS = (("ClinicScheduling", "clinic_scheduling"), ("MessageAPI", "message_api"),
          ("MobileMessaging", "mobile_messaging"), ("OnlineShop", "online_shop"),
          ("Tau2Retail", "tau2_retail"), ("TicketAPI", "ticket_api"),
          ("TradingBot", "trading_bot"), ("TravelAPI", "travel_api"),
          ("VehicleControlAPI", "vehicle_control_api"))

BROKEN = '''\
world Broken "A world with a typo."

entity User {
  key id: str
  name: str
}

state { users: table User }

tool get_user(user: User) -> User "Look a user up." {
  return usr
}
'''


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the hand-written examples (the synthesised corpus has its own checks in `make test`)
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("corpus"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORLDSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


# --------------------------------------------------------------------- build
def test_build_writes_one_package_per_world(workdir: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "examples", "-o", "out"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:len(WORLDS)] == [f"built {world} -> {Path('out') / package}"
                                 for world, package in WORLDS]
    written = files_under(workdir / "out")
    assert out[len(WORLDS)] == f"{len(written)} file(s) written"
    for package in PACKAGES:
        assert {f"{package}/__init__.py", f"{package}/world.py"} <= set(written)
        assert any(name.startswith(f"{package}/data/") and name.endswith(".json")
                   for name in written)
    # byte-identical to the committed packages
    packages = {package for _, package in WORLDS}
    committed = {name: data for name, data in files_under(REPO / "generated").items()
                 if name.split("/")[0] in packages}
    assert written == committed
    # a second build writes nothing
    assert main(["build", "examples", "-o", "out"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0 file(s) written"


def test_build_check_detects_edits_and_passes_after_rebuild(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "examples", "-o", "out"]) == 0
    assert main(["build", "--check", "examples", "-o", "out"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"{len(WORLDS)} world package(s) up to date in out"
    world = workdir / "out" / "online_shop" / "world.py"
    world.write_text(world.read_text(encoding="utf-8") + "# a hand edit\n", encoding="utf-8")
    before = files_under(workdir / "out")
    assert main(["build", "--check", "examples", "-o", "out"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"stale: {Path('out/online_shop/world.py')}"]
    assert "1 generated file(s) are out of date" in err
    assert files_under(workdir / "out") == before  # --check writes nothing
    assert main(["build", "examples", "-o", "out"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 file(s) written"
    assert main(["build", "--check", "examples", "-o", "out"]) == 0


def test_build_check_reports_missing_and_leftover_files(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--check", "examples", "-o", "out"]) == 1  # nothing built yet
    packages = {package for _, package in WORLDS}
    expected = [name for name in files_under(REPO / "generated") if name.split("/")[0] in packages]
    assert capsys.readouterr().out.count("stale: ") == len(expected)
    assert main(["build", "examples", "-o", "out"]) == 0
    leftover = workdir / "out" / "clinic_scheduling" / "data" / "old.json"
    leftover.write_text("{}", encoding="utf-8")
    (workdir / "out" / "mobile_messaging" / "__init__.py").unlink()
    capsys.readouterr()
    assert main(["build", "--check", "examples", "-o", "out"]) == 1
    stale = set(capsys.readouterr().out.splitlines())
    assert stale == {f"stale: {Path('out/mobile_messaging/__init__.py')}",
                     f"stale: {Path('out/clinic_scheduling/data/old.json')}"}
    assert main(["build", "examples", "-o", "out"]) == 0
    assert not leftover.exists()
    assert main(["build", "--check", "examples", "-o", "out"]) == 0


def test_build_after_a_spec_change_rewrites_only_that_world(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "examples", "-o", "out"]) == 0
    spec = workdir / "examples" / "clinic" / "clinic.world"
    spec.write_text("# one more comment\n" + spec.read_text(encoding="utf-8"), encoding="utf-8")
    capsys.readouterr()
    assert main(["build", "--check", "examples", "-o", "out"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"stale: {Path('out/clinic_scheduling/world.py')}"]
    assert main(["build", "examples", "-o", "out"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 file(s) written"


def test_build_with_errors_exits_1_with_diagnostics(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "broken.world").write_text(BROKEN, encoding="utf-8")
    assert main(["build", "broken.world", "-o", "out"]) == 1
    out, err = capsys.readouterr()
    assert "error[WS" in err and "broken.world:11:10" in err and "usr" in err
    assert "not built: the specs or their tasks have errors" in err
    assert "Traceback" not in out + err
    assert not (workdir / "out").exists()
    assert main(["build", "--check", "broken.world", "-o", "out"]) == 1


FAILING_TASK = BROKEN.replace("return usr", "return user") + '''
task find_ann in Broken {
  given { users: [{id: "U1", name: "Ann"}] }
  instruction "Look up user U1."
  check renamed: users["U1"].name == "Anna"
  solution { get_user(user: "U1") }
}
'''


def test_build_refuses_what_check_refuses(workdir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A world whose task fails validation (WS611) is not built: build and check agree."""
    (workdir / "tasky.world").write_text(FAILING_TASK, encoding="utf-8")
    assert main(["check", "tasky.world"]) == 1
    assert "error[WS611]" in capsys.readouterr().out
    assert main(["build", "tasky.world", "-o", "out"]) == 1
    err = capsys.readouterr().err
    assert "error[WS611]" in err and "not built" in err
    assert not (workdir / "out").exists()
    assert main(["build", "--check", "tasky.world", "-o", "out"]) == 1


def test_one_name_per_meaning_of_check() -> None:
    """``worldspec.check_paths`` validates tasks; the compiler's check is ``check_specs``."""
    import worldspec
    from worldspec.compiler import api
    from worldspec.services.validation import ValidatedResult

    assert not hasattr(api, "check_paths")
    spec = REPO / "examples" / "shop"
    assert worldspec.check_paths is worldspec.services.validation.check_paths
    validated = worldspec.check_paths([spec])
    assert isinstance(validated, ValidatedResult) and validated.ok
    assert validated.model is validated.result.model and validated.tasks
    assert api.check_specs([spec]).ok
    assert {"ValidatedResult", "TaskReport", "check_paths"} <= set(worldspec.__all__)


def test_build_missing_path_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "nope.world", "-o", "out"]) == 2
    assert "'nope.world' does not exist" in capsys.readouterr().err


# ----------------------------------------------------------------------- run
def test_run_solution_prints_calls_diffs_and_score(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "examples/messaging", "--task", "reply_to_priya", "--solution"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == '> login({"phone": "+14155550101", "password": "sunflower42"})'
    assert out[1].startswith('  ok: {"success": true, "data": {"id": "U001"')
    assert "  ~ users[\"U001\"].presence: offline -> online" in out
    assert sum(line.startswith("> ") for line in out) == 6
    assert "score 1.000 (solved)" in out
    assert [line for line in out if line.startswith("  [")] == [
        "  [pass] priya_read", "  [pass] nothing_failed", "  [pass] replied",
        "  [pass] one_message_sent"]


@pytest.mark.parametrize(("spec", "task"), [
    ("examples/messaging", "tidy_archive"), ("examples/clinic", "family_booking"),
    ("examples/shop", "return_headphones")])
def test_run_json_has_reward_checks_and_frame(workdir: Path, capsys: pytest.CaptureFixture[str],
                                              spec: str, task: str) -> None:
    assert main(["run", spec, "--task", task, "--solution", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reward"] == 1.0
    assert report["task"] == task
    assert report["frame"] == {"ok": True, "violations": []}
    assert report["checks"] and all(set(c) == {"name", "passed", "status", "weight", "message"}
                                    and c["passed"] for c in report["checks"])
    assert report["calls"] and not any(c["failed"] for c in report["calls"])


def test_run_replays_a_jsonl_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = workdir / "calls.jsonl"
    calls.write_text(
        '{"name": "archive_conversation", "arguments": {"conversation": "CONV106"}}\n'
        "\n"
        '{"name": "archive_conversation", "arguments": "{\\"conversation\\": \\"CONV103\\"}"}\n'
        '{"name": "unarchive_conversation", "arguments": {"conversation": "CONV104"}}\n'
        '{"name": "no_such_tool"}\n'
        '{"name": "mark_conversation_read", "arguments": {"conversation": "CONV104"}}\n',
        encoding="utf-8")
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls", "calls.jsonl",
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reward"] == 1.0
    assert [c["name"] for c in report["calls"]] == [
        "archive_conversation", "archive_conversation", "unarchive_conversation",
        "no_such_tool", "mark_conversation_read"]
    assert [c["failed"] for c in report["calls"]] == [False, False, False, True, False]
    assert report["calls"][3]["result"] == {"success": False,
                                            "error": 'Unknown tool "no_such_tool".'}


def test_run_partial_replay_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = workdir / "calls.jsonl"
    calls.write_text('{"name": "archive_conversation", "arguments": {"conversation": "CONV106"}}\n',
                     encoding="utf-8")
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 "calls.jsonl"]) == 1
    out = capsys.readouterr().out
    assert "score 0.000 (not solved: 3 of 3 check(s) fail)" in out
    assert "  [FAIL] hana_restored: The chat with Hana is back in Maya's main list." in out


def test_run_frame_violation_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = workdir / "calls.jsonl"
    lines = [json.dumps({"name": n, "arguments": a}) for n, a in [
        ("archive_conversation", {"conversation": "CONV106"}),
        ("archive_conversation", {"conversation": "CONV103"}),
        ("unarchive_conversation", {"conversation": "CONV104"}),
        ("mark_conversation_read", {"conversation": "CONV104"}),
        ("set_favorite_contact", {"contact": "CT101", "favorite": False})]]
    calls.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 "calls.jsonl"]) == 1
    out = capsys.readouterr().out
    # every check passes, but the broken frame zeroes the reward: not solved, and it says so
    assert "score 0.000 (not solved: the frame is violated)" in out.splitlines()
    assert "[pass] archived" in out
    assert 'frame violated: contacts["CT101"].favorite' in out
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 "calls.jsonl", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["reward"], report["solved"]) == (0.0, False)


WEIGHTED = BROKEN.replace("return usr", "return user") + '''
tool rename(user: User "The user's id.", name: str "The new name.") -> User "Rename a user." {
  user.name = name
  return user
}

task rename_ann in Broken {
  given { users: [{id: "U1", name: "Ann"}, {id: "U2", name: "Bob"}] }
  instruction "Rename U1 to Anna and U2 to Bobby."
  check anna weight 9999: users["U1"].name == "Anna"
  check bobby: users["U2"].name == "Bobby"
  solution { rename(user: "U1", name: "Anna")  rename(user: "U2", name: "Bobby") }
}
'''


def test_run_exit_status_and_printed_score_agree(workdir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A reward of 0.9999 is not shown as 1.000 next to a failing exit status."""
    (workdir / "w.world").write_text(WEIGHTED, encoding="utf-8")
    (workdir / "calls.jsonl").write_text(
        '{"name": "rename", "arguments": {"user": "U1", "name": "Anna"}}\n', encoding="utf-8")
    assert main(["run", "w.world", "--task", "rename_ann", "--calls", "calls.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "score 0.999 (not solved: 1 of 2 check(s) fail)" in out
    assert main(["run", "w.world", "--task", "rename_ann", "--solution"]) == 0
    assert "score 1.000 (solved)" in capsys.readouterr().out.splitlines()
    assert "solved" in SUBCOMMANDS["run"].description


def test_run_unknown_task_suggests_the_closest(workdir: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "examples/shop", "--task", "cancel_and_reordr", "--solution"]) == 2
    assert "did you mean 'cancel_and_reorder'?" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["file", "file/sub", "/proc/x", "/dev/null/x"])
def test_build_to_an_impossible_output_is_a_usage_error(
        target: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "file").write_text("not a folder", encoding="utf-8")
    before = files_under(workdir / "examples")
    # --check of an OUT that could exist (but does not) is merely out of date
    for check in ([], ["--check"]) if not target.startswith("/proc") else ([],):
        assert main(["build", "examples/shop", "-o", target, *check]) == 2
        err = capsys.readouterr().err
        assert err.startswith("worldspec: error: -o: "), err
        assert "internal error" not in err and "Traceback" not in err
    assert files_under(workdir / "examples") == before  # nothing half-written
    assert {p.name for p in workdir.iterdir()} <= {"cache", "examples", "file"}
    assert (workdir / "file").read_text(encoding="utf-8") == "not a folder"
    assert not Path("/proc/x").exists()


@pytest.mark.parametrize(("content", "expected"), [
    ("{not json}\n", "calls.jsonl:1: not JSON"),
    ('{"name": "x"}\n[1, 2]\n', 'calls.jsonl:2: expected an object with a "name"'),
    ('{"arguments": {}}\n', 'calls.jsonl:1: expected an object with a "name"'),
])
def test_run_bad_calls_file_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str],
                                    content: str, expected: str) -> None:
    (workdir / "calls.jsonl").write_text(content, encoding="utf-8")
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 "calls.jsonl"]) == 2
    assert expected in capsys.readouterr().err


def test_run_missing_calls_file_exits_2(workdir: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 "missing.jsonl"]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def test_run_unknown_task_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "examples/messaging", "--task", "nope", "--solution"]) == 2
    err = capsys.readouterr().err
    assert "no task 'nope' in examples/messaging" in err
    assert "reply_to_priya" in err
    (workdir / "notasks.world").write_text(BROKEN.replace("usr", "user"), encoding="utf-8")
    assert main(["run", "notasks.world", "--task", "nope", "--solution"]) == 2
    assert "it defines no tasks" in capsys.readouterr().err


def test_run_spec_with_errors_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "broken.world").write_text(BROKEN, encoding="utf-8")
    assert main(["run", "broken.world", "--task", "t", "--solution"]) == 1
    out, err = capsys.readouterr()
    assert "error[WS" in err and "cannot run: the specs have errors" in err
    assert "Traceback" not in out + err


def test_run_missing_spec_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "nowhere", "--task", "t", "--solution"]) == 2
    assert "'nowhere' does not exist" in capsys.readouterr().err


def test_real_entry_point(workdir: Path) -> None:
    env = {**os.environ, "WORLDSPEC_CACHE": str(workdir / "cache"), "NO_COLOR": "1",
           "PYTHONPATH": str(REPO)}  # this checkout's code, not an installed one
    build = subprocess.run([sys.executable, "-m", "worldspec", "build", "--check",
                            str(REPO / "examples"), "-o", str(REPO / "generated")],
                           cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([sys.executable, "-m", "worldspec", "run", "examples/shop", "--task",
                          "dispatch_day", "--solution", "--format", "json"],
                         cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["reward"] == 1.0
