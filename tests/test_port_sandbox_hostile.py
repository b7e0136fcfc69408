"""The sandbox of ``worldspec compare`` / ``port`` against a hostile original (issue 35).

Every attack of the issue's sandbox section, as a method of tests/port_classes/hostile.py
that first switches off the child's Python audit hook: it must meet the operating system's
boundary (bubblewrap's namespaces, its own filesystem view, the seccomp filter). Each test
also shows the other side: what the original may do (its own folder, its private /tmp) still
works. Where the machine has no bubblewrap the tests skip, but under CI=true they fail: CI
installs bubblewrap and runs them for real.

Every test is bounded: call timeouts of a few seconds, a memory limit, and no attack that
could hurt the test's process if it got through is run unconfined.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from port_replies import GET_ITEM, RESTOCK, TAKE

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_source
from worldspec.port.compare import CompareOptions, Original, compare
from worldspec.port.sandbox import (
    Limits,
    Sandbox,
    SandboxStopped,
    SandboxUnavailable,
    confinement_problem,
)
from worldspec.port.skeleton import emit_skeleton, read_class
from worldspec.port.translate import splice
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

CLASSES = Path(__file__).resolve().parent / "port_classes"
HOSTILE = CLASSES / "hostile.py"
INVENTORY = CLASSES / "inventory.py"
DATA = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))
LIMITS = Limits(call_timeout=10.0, load_timeout=20.0, memory_mb=512, cpu_seconds=30)
MARKER_NAME = "WORLDSPEC_HOSTILE_MARKER"


def require_sandbox() -> None:
    problem = confinement_problem()
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the hostile originals confined: {problem}")
    pytest.skip(f"no sandbox on this machine: {problem}")


@pytest.fixture
def hostile() -> Iterator[Sandbox]:
    """A confined hostile original."""
    require_sandbox()
    with Sandbox(HOSTILE, "Hostile", load=None, limits=LIMITS) as box:
        assert box.reset().state == {"calls": 0}
        yield box


def attempt(box: Sandbox, name: str, **args: object) -> dict[str, object]:
    outcome = box.call(name, dict(args))
    assert not outcome.raised, outcome.error
    assert isinstance(outcome.result, dict)
    return outcome.result


#: run as the parent process (``python -c``), with the secret in its environment from its
#: start, as an API key would be: /proc/<pid>/environ shows a process's environment as it was
#: exec'd, so the secret must be there at exec time, not set later by the test
PARENT_SCRIPT = """
import json, os, sys
from worldspec.port.sandbox import Limits, Sandbox
with Sandbox(sys.argv[1], "Hostile", load=None, limits=Limits(call_timeout=10.0)) as box:
    box.reset()
    found = box.call("environ_files", {"pid": os.getpid()}).result
with open(f"/proc/{os.getpid()}/environ", "rb") as handle:
    own = handle.read().decode("utf-8", "replace")
print(json.dumps({"pid": os.getpid(), "found": found, "parent_has_it": sys.argv[2] in own}))
"""


def test_no_environment_of_the_parent_or_any_other_process(tmp_path: Path) -> None:
    require_sandbox()
    secret = f"sk-secret-{uuid.uuid4().hex}"
    root = Path(__file__).resolve().parents[1]
    environment = {**os.environ, MARKER_NAME: secret,
                   "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", PARENT_SCRIPT, str(HOSTILE), secret],
                          capture_output=True, text=True, timeout=90, env=environment,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["parent_has_it"] is True  # the secret is where the attack looks
    found = answer["found"]
    assert secret not in done.stdout
    assert MARKER_NAME not in json.dumps(found)
    # its own pid namespace: bwrap's init and the child itself, nothing of the host
    parent = str(answer["pid"])
    assert {name for name in found["environ"] if name.isdigit()} <= {"1", "2", parent}
    assert "Error" in found["environ"][parent]  # no such process in its /proc


def test_no_file_outside_its_folder_and_the_interpreter(hostile: Sandbox) -> None:
    box = hostile
    own = attempt(box, "read_file", path=str(CLASSES / "inventory.json"))
    assert own["done"] is True and "bolt" in str(own["value"])
    for path in ("/etc/passwd", "/etc/shadow", str(Path(__file__)),
                 str(Path(__file__).resolve().parents[1] / "pyproject.toml")):
        outside = attempt(box, "read_file", path=path)
        assert outside["done"] is False, path
        assert "FileNotFoundError" in str(outside["error"]), outside
    for folder in (Path.home() / ".ssh", Path("/root/.ssh"), Path.home(), Path("/etc")):
        listing = attempt(box, "list_folder", path=str(folder))
        assert listing["done"] is False or ".ssh" not in listing["value"], (folder, listing)


def test_no_file_written_outside_its_private_tmp(hostile: Sandbox,
                                                 tmp_path: Path) -> None:
    box = hostile
    name = f"worldspec-hostile-{uuid.uuid4().hex}"
    for target in (tmp_path / "escaped.txt", CLASSES / f"{name}.txt", Path("/") / name):
        written = attempt(box, "write_file", path=str(target))
        assert written["done"] is False, target
        assert not target.exists()
    # its own /tmp works, and is its own: nothing appears in the host's /tmp
    private = attempt(box, "write_file", path=f"/tmp/{name}")
    assert private["done"] is True
    assert not (Path("/tmp") / name).exists()


def test_no_network_not_even_loopback(hostile: Sandbox) -> None:
    box = hostile
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        dialled = attempt(box, "connect", port=listener.getsockname()[1])
        assert dialled["done"] is False
        assert "Operation not permitted" in str(dialled["error"]), dialled
        with pytest.raises(TimeoutError):
            listener.accept()


@pytest.mark.parametrize("method", ["run_process", "fork_exec"])
def test_no_new_process(hostile: Sandbox, tmp_path: Path, method: str) -> None:
    box = hostile
    target = tmp_path / "spawned.txt"
    spawned = attempt(box, method, path=str(target))
    assert spawned["done"] is False
    assert "Operation not permitted" in str(spawned["error"]), spawned
    assert not target.exists()


def test_fork_and_a_fork_bomb_are_refused(hostile: Sandbox) -> None:
    box = hostile
    assert attempt(box, "fork")["done"] is False
    bomb = attempt(box, "fork_bomb")
    assert bomb["forks"] == 0 and bomb["errors"] == ["PermissionError: [Errno 1] "
                                                     "Operation not permitted"]
    assert attempt(box, "ping") == {"pong": 1}  # threads and plain calls still work


def test_it_cannot_kill_the_tool_that_runs_it(hostile: Sandbox) -> None:
    box = hostile
    results = attempt(box, "kill", pid=os.getpid())
    mine = results[str(os.getpid())]
    assert isinstance(mine, dict) and mine["done"] is False
    assert "ProcessLookupError" in str(mine["error"])
    # still here, and so is the sandbox (its pid namespace's init ignores the signal)
    assert attempt(box, "ping") == {"pong": 1}


def test_no_process_outlives_the_sandbox(hostile: Sandbox, tmp_path: Path) -> None:
    box = hostile
    target = tmp_path / "late.txt"
    delay = 2.0
    spawned = attempt(box, "setsid_grandchild", path=str(target), delay=delay)
    assert spawned["done"] is False
    box.close()
    assert not target.exists()
    time.sleep(delay + 1.5)
    assert not target.exists()


@pytest.mark.parametrize(("kind", "problem"), [
    ("stale", "an answer to request 0, not to"),
    ("claims", "raised is not a bool"),
    ("deep", "values nested over 100 levels"),
])
def test_a_forged_answer_stops_the_original_instead_of_being_believed(
        hostile: Sandbox, kind: str, problem: str) -> None:
    box = hostile
    with pytest.raises(SandboxStopped, match="broke the sandbox's protocol") as stopped:
        box.call("forge_answer", {"kind": kind})
    assert problem in stopped.value.reason
    # a fresh child, not the forged one, answers the next sequence
    assert box.reset().state == {"calls": 0}
    assert attempt(box, "ping") == {"pong": 1}


def test_its_private_tmp_is_bounded() -> None:
    require_sandbox()
    with Sandbox(HOSTILE, "Hostile", load=None,
                 limits=Limits(call_timeout=20.0, memory_mb=512, tmp_mb=8)) as box:
        box.reset()
        filled = attempt(box, "memory_in_tmp", megabytes=50)
    assert 1 <= int(str(filled["written_mb"])) < 9
    assert "No space left on device" in str(filled["error"])


def inventory_world() -> type[Episode]:
    info = read_class(INVENTORY.read_text(encoding="utf-8"))
    text = emit_skeleton(info, DATA).text
    for tool in (GET_ITEM, TAKE, RESTOCK):
        text = splice(text, tool)
    result = check_source(text, "inventory.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


def test_replacing_json_dumps_cannot_forge_agreement() -> None:
    require_sandbox()
    options = CompareOptions(examples=30, steps=6, limits=LIMITS)
    world = inventory_world()
    honest = compare(world, Original(INVENTORY, "InventoryEnv", DATA), options)
    assert honest.agrees, honest.render_text()
    forged = compare(world, Original(CLASSES / "forged_agreement.py", "ForgedInventory", DATA),
                     options)
    assert not forged.agrees
    found = forged.differences[0]
    assert (found.kind, found.tool) == ("result", "get_item"), found.render()
    assert found.calls[-1].original["data"]["forged"] is True


# ------------------------------------------------------- where there is no sandbox
@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A PATH without bubblewrap on it."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


def test_without_bwrap_the_sandbox_refuses_unless_trusted(no_bwrap: None) -> None:
    assert confinement_problem() == "bubblewrap (bwrap) is not installed"
    with Sandbox(INVENTORY, "InventoryEnv", data=DATA, limits=LIMITS) as box, \
            pytest.raises(SandboxUnavailable, match="--trusted-original"):
        box.reset()
    with Sandbox(INVENTORY, "InventoryEnv", load="auto", data=DATA, limits=LIMITS,
                 trusted=True) as box:
        assert box.reset().state["items"]["A1"]["stock"] == 3
        assert box.call("take", {"item_id": "A1"}).result["success"] is True


def test_without_bwrap_compare_refuses_in_one_line_unless_trusted(
        no_bwrap: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = read_class(INVENTORY.read_text(encoding="utf-8"))
    text = emit_skeleton(info, DATA).text
    for tool in (GET_ITEM, TAKE, RESTOCK):
        text = splice(text, tool)
    world, data = tmp_path / "inventory.world", tmp_path / "inventory.json"
    world.write_text(text, encoding="utf-8")
    data.write_text(json.dumps(DATA), encoding="utf-8")
    command = ["compare", str(INVENTORY), str(world), "--init-data", str(data),
               "--examples", "10", "--steps", "4"]
    assert cli_main(command) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bubblewrap (bwrap) is not installed" in err
    assert "--trusted-original" in err
    assert cli_main([*command, "--trusted-original"]) == 0
    assert "agree" in capsys.readouterr().out


def test_without_bwrap_port_refuses_unless_skeleton_only(
        no_bwrap: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["port", str(INVENTORY), "-o", str(tmp_path / "x.world")]) == 2
    assert "--trusted-original" in capsys.readouterr().err
    assert cli_main(["port", str(INVENTORY), "--skeleton-only",
                     "-o", str(tmp_path / "x.world")]) == 0
