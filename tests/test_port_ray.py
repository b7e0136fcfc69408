"""``worldspec port --batch DIR --backend ray`` on a real local Ray cluster, and the sandbox
inside a Ray worker (a threaded process, where the child's limits and exit status must work
as they do on the command line).

One in-process cluster serves the module, as in tests/test_ray.py; the model is the scripted
server answering with tests/port_replies.py. Skipped without Ray, except under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from port_replies import GET_ITEM, RESTOCK, TAKE, port_responder
from ray_support import local_cluster

from worldspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ROOT / "tests" / "port_classes"
CORRECT = {"get_item": GET_ITEM, "take": TAKE, "restock": RESTOCK}

try:
    import ray
except ImportError:  # pragma: no cover - depends on the install
    ray = None
    if os.environ.get("CI") == "true":
        raise
pytestmark = pytest.mark.skipif(ray is None, reason="Ray is not installed: "
                                                    "pip install '.[ray]'")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    assert ray is not None
    path = os.pathsep.join((str(ROOT), str(ROOT / "tests")))  # workers import this module
    with local_cluster(ray, path) as address:
        yield address


def _classes(folder: Path) -> Path:
    folder.mkdir()
    shutil.copy(CLASSES / "inventory.py", folder / "inventory.py")
    shutil.copy(CLASSES / "inventory.json", folder / "inventory.json")
    (folder / "other.py").write_text((CLASSES / "inventory.py").read_text(encoding="utf-8")
                                     .replace("class InventoryEnv", "class StoreEnv"),
                                     encoding="utf-8")
    shutil.copy(CLASSES / "inventory.json", folder / "StoreEnv.json")
    return folder


def _without_clock(summary: dict[str, Any], folder: Path) -> str:
    """The summary without wall-clock durations and what depends on the exact sequences run
    (the calls made, the lenient-original and refused-otherwise notes with their counts and
    examples: hypothesis' examples are not the same call for call from one process to
    another), with the folder written as DIR."""
    for detail in summary.get("classes", []):
        assert detail["calls_compared"] > 100
        detail.pop("calls_compared")
        detail["compare"].pop("seconds")
        detail["compare"].pop("calls")
        detail["compare"].pop("lenient_original")
        detail["compare"].pop("refused_otherwise")
        for step in detail["history"]:
            step.pop("calls", None)
    summary.pop("journal", None)
    return json.dumps(summary, sort_keys=True).replace(str(folder), "DIR")


def test_a_ray_port_batch_writes_what_a_local_one_writes(
        cluster: str, llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = port_responder(CORRECT)
    summaries = {}
    for name, more in (("local", []), ("ray", ["--backend", "ray", "--workers", "2"])):
        folder = _classes(tmp_path / name)
        assert main(["port", "--batch", str(folder), "--base-url", llm_server.url, "--model",
                     "m", "--examples", "30", "--confirm", "20", "--progress", "never",
                     "--format", "json",
                     *more]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["accepted"] == 2 and summary["errors"] == 0, summary
        summaries[name] = _without_clock(summary, folder)
    assert len(llm_server.chat_requests) == 12  # 3 methods x 2 classes, each way
    assert summaries["local"] == summaries["ray"]
    local, remote = tmp_path / "local" / "ported", tmp_path / "ray" / "ported"
    worlds = sorted(p.name for p in local.glob("*.world"))
    assert len(worlds) == 2 and worlds == sorted(p.name for p in remote.glob("*.world"))
    for name in worlds:
        assert (local / name).read_bytes() == (remote / name).read_bytes()
    requests = (remote / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(requests) == 6  # the workers wrote the request journal the driver named


def _sandbox_in_a_worker(file: str) -> dict[str, str]:
    """Runs in a Ray actor: the sandbox's limits, each stopping a runaway call."""
    from worldspec.port.sandbox import Limits, Sandbox, SandboxStopped

    seen: dict[str, str] = {}

    def stopped(box: Sandbox, method: str) -> str:
        box.reset()
        try:
            box.call(method, {})
        except SandboxStopped as exc:
            return str(exc)
        return "not stopped"

    with Sandbox(file, "Runaway", load=None,
                 limits=Limits(call_timeout=2.0, memory_mb=512, cpu_seconds=30)) as box:
        box.reset()
        seen["ping"] = json.dumps(box.call("ping", {}).result)
        seen["connect"] = box.call("connect", {}).error
        seen["spawn"] = box.call("spawn", {}).error
        seen["spin"] = stopped(box, "spin")
    with Sandbox(file, "Runaway", load=None,
                 limits=Limits(call_timeout=120.0, memory_mb=512)) as box:
        seen["hog"] = stopped(box, "hog")
    with Sandbox(file, "Runaway", load=None,
                 limits=Limits(call_timeout=120.0, cpu_seconds=2)) as box:
        seen["cpu"] = stopped(box, "spin")
    return seen


def test_the_sandbox_keeps_its_limits_inside_a_ray_worker(cluster: str) -> None:
    assert ray is not None

    class Host:
        def run(self, file: str) -> dict[str, str]:
            return _sandbox_in_a_worker(file)

    host = ray.remote(Host).options(max_concurrency=4).remote()  # a threaded actor
    seen = ray.get(host.run.remote(str(CLASSES / "runaway.py")), timeout=240)
    assert seen["ping"] == '{"pong": 1}'
    assert "the sandbox forbids socket" in seen["connect"]
    assert "the sandbox forbids subprocess" in seen["spawn"]
    assert seen["spin"] == "the original did not answer within 2 s (stopped)"
    assert seen["hog"] == "the original ran out of memory (limit 512 MB)"
    assert seen["cpu"] == "the original used up its CPU time (limit 2 s)"
