"""The sandbox of ``worldspec port``: the original class runs in a child process with no
network, no new processes, a clean environment and time and memory limits; a runaway call is
stopped and reported, and the next request gets a fresh child."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from worldspec.port.sandbox import Limits, Sandbox, SandboxError, SandboxStopped

CLASSES = Path(__file__).resolve().parent / "port_classes"
RUNAWAY = CLASSES / "runaway.py"
FAST = Limits(call_timeout=2.0, load_timeout=10.0, memory_mb=512, cpu_seconds=20)


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(RUNAWAY, "Runaway", load=None, limits=FAST) as box:
        yield box


def test_calls_answer_with_result_and_public_state(sandbox: Sandbox) -> None:
    loaded = sandbox.reset()
    assert loaded.state == {"calls": 0} and "spin" in loaded.methods
    outcome = sandbox.call("ping", {})
    assert outcome.result == {"pong": 1} and outcome.state == {"calls": 1}
    assert not outcome.raised  # the print went to a sink, not into the protocol


def test_arguments_that_do_not_bind_are_not_called(sandbox: Sandbox) -> None:
    sandbox.reset()
    outcome = sandbox.call("ping", {"extra": 1})
    assert outcome.unbound and "extra" in outcome.error and outcome.state == {"calls": 0}


def test_a_call_that_never_returns_is_stopped_and_the_next_reset_starts_afresh(
        sandbox: Sandbox) -> None:
    sandbox.reset()
    with pytest.raises(SandboxStopped, match="did not answer within 2 s"):
        sandbox.call("spin", {})
    assert sandbox.reset().state == {"calls": 0}
    assert sandbox.call("ping", {}).result == {"pong": 1}
    assert sandbox.starts == 2


def test_unbounded_allocation_is_stopped() -> None:
    # a generous clock, so that on a loaded machine the memory limit is what stops it
    limits = Limits(call_timeout=120.0, memory_mb=512)
    with Sandbox(RUNAWAY, "Runaway", load=None, limits=limits) as box:
        box.reset()
        with pytest.raises(SandboxStopped, match="ran out of memory"):
            box.call("hog", {})
        assert box.reset().state == {"calls": 0}


def test_no_network_and_no_processes(sandbox: Sandbox) -> None:
    sandbox.reset()
    connect = sandbox.call("connect", {})
    assert connect.raised and "the sandbox forbids socket" in connect.error
    spawn = sandbox.call("spawn", {})
    assert spawn.raised and "the sandbox forbids subprocess" in spawn.error


def test_the_environment_is_cleared(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    sandbox.reset()
    names = sandbox.call("environment", {}).result["names"]
    assert "OPENAI_API_KEY" not in names and "PYTHONPATH" not in names
    assert set(names) <= {"PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
                          "PYTHONIOENCODING", "TZ", "PWD"}  # PWD: bwrap's, /tmp
    assert os.environ["OPENAI_API_KEY"] == "sk-must-not-leak"


def test_a_module_that_never_finishes_importing_is_stopped() -> None:
    limits = Limits(call_timeout=1.0, load_timeout=2.0)
    with Sandbox(CLASSES / "hangs_on_import.py", "Never", limits=limits) as box, \
            pytest.raises(SandboxStopped, match="did not answer within 2 s"):
        box.reset()


def test_a_module_that_fails_to_import_is_a_load_error() -> None:
    with Sandbox(CLASSES / "notes_api.py", "NotesAPI", limits=FAST) as box, \
            pytest.raises(SandboxError, match="importing this module is forbidden"):
        box.reset()


def test_a_missing_class_is_a_load_error() -> None:
    with Sandbox(RUNAWAY, "Nope", limits=FAST) as box, \
            pytest.raises(SandboxError, match="no class Nope"):
        box.reset()


def test_the_child_is_renewed_after_many_resets(monkeypatch: pytest.MonkeyPatch) -> None:
    from worldspec.port import sandbox as module

    monkeypatch.setattr(module, "RESETS_PER_CHILD", 2)
    with Sandbox(RUNAWAY, "Runaway", load=None, limits=FAST) as box:
        for _ in range(5):
            assert box.reset().state == {"calls": 0}
        assert box.starts == 3


def test_a_child_out_of_cpu_time_is_stopped_and_says_so() -> None:
    limits = Limits(call_timeout=120.0, cpu_seconds=1)
    with Sandbox(RUNAWAY, "Runaway", load=None, limits=limits) as box:
        box.reset()
        with pytest.raises(SandboxStopped, match=r"used up its CPU time \(limit 1 s\)"):
            box.call("spin", {})
        assert box.reset().state == {"calls": 0}
