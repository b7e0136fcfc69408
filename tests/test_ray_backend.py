"""The Ray backend's edges that need no cluster: what a rollout worker loads, and the message
when Ray is not installed. These run with or without Ray."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from worldspec.cli.main import main
from worldspec.rollout.runner import RolloutSettings, RolloutWorker, WorldSource
from worldspec.services.loading import load_world
from worldspec.services.model_client import LLMConfig

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"

#: A driver in which ``import ray`` fails, as on a machine without the extra.
WITHOUT_RAY = """
import sys

class NoRay:
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError("No module named 'ray'")
        return None

sys.meta_path.insert(0, NoRay())
from worldspec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [
    ["rollout", str(PACKAGE)],
    ["synth", "world", "A counter.", "-o", "x.world"],
    ["synth", "tasks", "examples/shop/shop.world"],
    ["synth", "themes", "corpus.jsonl"],
], ids=["rollout", "synth world", "synth tasks", "synth themes"])
def test_backend_ray_without_ray_says_what_to_install(argv: list[str], tmp_path: Path) -> None:
    endpoint = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    done = subprocess.run([sys.executable, "-c", WITHOUT_RAY, *argv, *endpoint, "--backend",
                           "ray"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr
    assert ("--backend ray needs Ray, which is not installed: pip install '.[ray]' in a "
            "worldspec clone, or 'WHEEL[ray]' with the built wheel") in done.stderr
    assert "Traceback" not in done.stderr


def test_a_shipped_rollout_worker_loads_the_runtime_and_the_world_only(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig, tmp_path: Path) -> None:
    """What a Ray worker gets (the pickled worker: the package's source and the configs),
    unpickled in a fresh interpreter, plays a rollout without loading the compiler."""
    llm_server.responder = lambda request: "Done."
    world = load_world(PACKAGE)
    worker = RolloutWorker([WorldSource.of(world, "generated/mobile_messaging")],
                           RolloutSettings(model="m"), llm_config, None)
    shipped = tmp_path / "worker.pickle"
    shipped.write_bytes(pickle.dumps(worker))
    code = (
        "import asyncio, json, pickle, sys\n"
        f"worker = pickle.loads(open({str(shipped)!r}, 'rb').read())\n"
        "import os\n"
        "async def go():\n"
        "    await worker.start()\n"
        "    record = await worker.run((0, 'tidy_archive', 0, 7, 'k'))\n"
        "    folder = os.path.dirname(sys.modules[worker.sources[0].world.__module__].__file__)\n"
        "    assert os.path.isfile(os.path.join(folder, 'world.py'))\n"
        "    await worker.stop()\n"
        "    assert not os.path.exists(folder), 'the shipped copy is left behind'\n"
        "    return record\n"
        "record = asyncio.run(go())\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('lark', 'jinja2') or\n"
        "       m.startswith(('worldspec.compiler', 'worldspec.dsl', 'worldspec.cli'))]\n"
        "print(json.dumps({'bad': bad, 'status': record['status'], 'key': record['key'],\n"
        "                  'sha': record['world_sha256'], 'path': record['world_path'],\n"
        "                  'world': worker.sources[0].world.__module__}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ,
                                                          "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["bad"] == [] and seen["status"] == "finished" and seen["key"] == "k"
    assert seen["sha"] == WorldSource.of(world, "x").sha256
    assert seen["path"] == "generated/mobile_messaging"
    assert seen["world"].startswith("_worldspec_shipped_")  # loaded from the shipped source


@pytest.mark.skipif(importlib.util.find_spec("ray") is None and os.environ.get("CI") != "true",
                    reason="Ray is not installed: pip install '.[ray]'")
def test_an_unreachable_cluster_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["rollout", str(PACKAGE), "--base-url", "http://127.0.0.1:9/v1", "--model",
                 "m", "-o", str(tmp_path), "--backend", "ray", "--address",
                 f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in err
    assert "Traceback" not in err and not (tmp_path / "rollouts.jsonl").exists()
